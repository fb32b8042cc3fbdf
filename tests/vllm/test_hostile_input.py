"""Hostile input through the gateway to a real vLLM: no gateway-made 5xx, every call recorded.

The strategies of tests/security/hostile_inputs.py plus vLLM's own fields (stream spelled as
text, cache_salt, priority, request_id, kv_transfer_params, vllm_xargs, media URLs). A 5xx from
the gateway counts as vLLM's own only if the same body sent straight to vLLM answers the same
status; anything else is a problem. Figures: PLUMBLINE_HOSTILE_REPORT=path
PLUMBLINE_FUZZ_EXAMPLES=N (docs/reliability.md); `make test` runs 40 examples per strategy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call
from tests.security.hostile_inputs import HEADERS, JSON, RAW_BODIES, encode, openai_requests
from tests.security.tally import Tally, examples
from tests.support.gateway_process import GatewayProcess
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

FUZZ = settings(
    max_examples=examples(40),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ENDPOINTS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
MEDIA_URL = st.sampled_from(
    ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:1/x.png", "file:///etc/passwd"]
)
MEDIA_PART = st.one_of(
    st.builds(lambda url: {"type": "image_url", "image_url": {"url": url}}, MEDIA_URL),
    st.builds(lambda url: {"type": "audio_url", "audio_url": {"url": url}}, MEDIA_URL),
    st.builds(lambda url: {"type": "video_url", "video_url": {"url": url}}, MEDIA_URL),
    st.builds(lambda url: {"type": "file", "file": {"file_data": url}}, MEDIA_URL),
)
VLLM_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "stream": st.sampled_from(["yes", "true", "on", "1", 1, "no", "off", 0, "maybe", 2]),
    "cache_salt": st.one_of(st.text(max_size=20), JSON),
    "priority": st.one_of(st.integers(min_value=-(2**40), max_value=2**40), JSON),
    "request_id": st.one_of(st.text(max_size=40), JSON),
    "kv_transfer_params": JSON,
    "vllm_xargs": JSON,
    "n": st.sampled_from(["2", 2.0, "1", True]),
    "logprobs": st.sampled_from(["yes", "true", 1, "2", 2]),
    "top_logprobs": st.sampled_from(["3", 3.0, "x"]),
    "max_tokens": st.sampled_from(["3", 3.0, "3.5", True]),
}


@st.composite
def vllm_requests(draw: st.DrawFn, chat: bool) -> dict[str, Any]:
    """A short valid request with vLLM's own fields set to what a hostile team would send."""
    body: dict[str, Any] = {"model": "tiny", "max_tokens": 4}
    if chat:
        content: Any = "Hi"
        if draw(st.booleans()):
            content = [{"type": "text", "text": "Hi"}, draw(MEDIA_PART)]
        body["messages"] = [{"role": "user", "content": content}]
    else:
        body["prompt"] = "Hi"
    for name in draw(st.lists(st.sampled_from(sorted(VLLM_FIELDS)), max_size=4, unique=True)):
        body[name] = draw(VLLM_FIELDS[name])
    return body


@st.composite
def short_openai_requests(draw: st.DrawFn, chat: bool) -> dict[str, Any]:
    """The proxy fuzzer's bodies, kept to a few tokens where they do not set max_tokens."""
    body = draw(openai_requests(chat))
    body.setdefault("max_tokens", 4)
    return body


class VllmTally(Tally):
    """A Tally that asks vLLM itself before calling a gateway 5xx a problem."""

    def __init__(self, direct: httpx.Client) -> None:
        super().__init__()
        self.direct = direct
        self.vllm_5xx: list[str] = []
        self.call_ids: list[str] = []

    def sent(self, target: str, path: str, response: httpx.Response, content: bytes) -> None:
        """Count one gateway response; a 5xx is vLLM's only if vLLM answers it too."""
        if call_id := response.headers.get("x-plumbline-call-id"):
            self.call_ids.append(call_id)
        else:
            self.problems.append(f"{target}: no call id <- {content!r:.200}")
        if response.status_code >= 500:
            own = self.direct.post(path, content=content)
            if own.status_code == response.status_code:
                self.count(f"{target} (vLLM's own 5xx, passed through)", response.status_code)
                self.vllm_5xx.append(f"{response.status_code} {response.text[:200]}")
                return
        self.check(target, response, content)


@pytest.fixture(scope="module")
def direct(vllm_server: str) -> Iterator[httpx.Client]:
    headers = {"Content-Type": "application/json"}
    with httpx.Client(base_url=vllm_server, headers=headers, timeout=120) as client:
        yield client


@pytest.fixture(scope="module")
def tally(direct: httpx.Client) -> Iterator[VllmTally]:
    found = VllmTally(direct)
    yield found
    found.write("vllm")
    print({t: found.tried(t) for t in found.statuses}, f"vLLM's own 5xx: {found.vllm_5xx[:5]}")


@pytest.fixture(scope="module")
def gateway(vllm_gateway: GatewayProcess, gateway_key: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {gateway_key}", "Content-Type": "application/json"}
    with httpx.Client(base_url=vllm_gateway.url, headers=headers, timeout=120) as client:
        yield client


@pytest.mark.parametrize("kind", sorted(ENDPOINTS))
def test_request_shaped_bodies(gateway: httpx.Client, tally: VllmTally, kind: str) -> None:
    before = len(tally.problems)

    @FUZZ
    @given(body=short_openai_requests(kind == "chat"))
    def one(body: dict[str, Any]) -> None:
        content = encode(body)
        response = gateway.post(ENDPOINTS[kind], content=content)
        tally.sent(f"{kind}: request-shaped JSON", ENDPOINTS[kind], response, content)

    one()
    assert not tally.problems[before:], tally.problems[before : before + 5]


@pytest.mark.parametrize("kind", sorted(ENDPOINTS))
def test_vllm_fields_a_team_should_not_control(
    gateway: httpx.Client, tally: VllmTally, kind: str
) -> None:
    before = len(tally.problems)

    @FUZZ
    @given(body=vllm_requests(kind == "chat"))
    def one(body: dict[str, Any]) -> None:
        content = encode(body)
        response = gateway.post(ENDPOINTS[kind], content=content)
        tally.sent(f"{kind}: vLLM's own fields", ENDPOINTS[kind], response, content)

    one()
    assert not tally.problems[before:], tally.problems[before : before + 5]


def test_raw_bodies(gateway: httpx.Client, tally: VllmTally) -> None:
    before = len(tally.problems)

    @FUZZ
    @given(content=RAW_BODIES)
    def one(content: bytes) -> None:
        response = gateway.post(ENDPOINTS["chat"], content=content)
        tally.sent("chat: raw bytes, JSON, deep nesting", ENDPOINTS["chat"], response, content)

    one()
    assert not tally.problems[before:], tally.problems[before : before + 5]


def test_hostile_headers(gateway: httpx.Client, tally: VllmTally) -> None:
    content = encode({"model": "tiny", "messages": [{"role": "user", "content": "Hi"}]})
    content = content[:-1] + b', "max_tokens": 2}'

    before = len(tally.problems)

    @FUZZ
    @given(headers=HEADERS)
    def one(headers: dict[str, str]) -> None:
        raw = [(name.encode(), value.encode("latin-1")) for name, value in headers.items()]
        response = gateway.post(ENDPOINTS["chat"], content=content, headers=raw)
        tally.sent("chat: header values", ENDPOINTS["chat"], response, content)

    one()
    assert not tally.problems[before:], tally.problems[before : before + 5]


def test_every_input_is_a_call_row(gateway_database: str, tally: VllmTally) -> None:
    expected = set(tally.call_ids)
    assert expected, "the fuzz tests above sent nothing"
    engine = create_db_engine(gateway_database)
    sessions = make_session_factory(engine)

    def recorded() -> int:
        with sessions() as session:
            return sum(
                int(
                    session.scalar(
                        select(func.count())
                        .select_from(Call)
                        .where(Call.id.in_(sorted(expected)[start : start + 1000]))
                    )
                    or 0
                )
                for start in range(0, len(expected), 1000)
            )

    try:
        wait_until(lambda: recorded() == len(expected), timeout=60, what="every call recorded")
        with sessions() as session:
            gateway_5xx = session.scalar(
                select(func.count())
                .select_from(Call)
                .where(Call.id.in_(sorted(expected)[:30000]), Call.status_code >= 500)
            )
    finally:
        engine.dispose()
    assert gateway_5xx == len(tally.vllm_5xx)
