"""A team attacks through the Anthropic Messages API: other teams' cache, engine, network, keys.

The same rules as chat (tenant_fields.py) hold for `/v1/messages` and its `count_tokens`: the
prefix cache is salted per team, engine-steering fields are refused, image (or any) block
sources that name a URL are held to the model's media domains, and nothing the client sends
in a header (`x-api-key`, `anthropic-version`, `anthropic-beta`, `Authorization`) reaches the
backend or chooses where the gateway connects. A listener the test owns plays the internal host.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anthropic
import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.security.provider_listener import ProviderListener
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("security-messages")
PATH = "/v1/messages"
COUNT = "/v1/messages/count_tokens"
ALLOWED_MEDIA_HOST = "media.example"
BACKEND_SECRET = "backend-secret-for-spy"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
LONG = (
    "The indemnity clause of the master services agreement between the parties covers "
    "losses, damages, liabilities, costs and expenses arising from third-party claims, "
    "and survives termination for a period of five years. Question {tag}:"
)


class Stack:
    """The gateway, its database and keys, and the listeners standing for other hosts."""

    def __init__(
        self,
        gateway: GatewayProcess,
        url: str,
        keys: dict[str, str],
        listeners: tuple[ProviderListener, ProviderListener],
    ) -> None:
        self.gateway = gateway
        self.database_url = url
        self.keys = keys
        # A backend that records what reaches it, and a host inside the serving network.
        self.spy, self.internal = listeners

    def post(self, who: str, path: str, body: Any, **headers: str) -> httpx.Response:
        """POST as a team, its key in `x-api-key` as the anthropic SDK sends it."""
        sent = {"x-api-key": self.keys[who], "anthropic-version": "2023-06-01", **headers}
        return httpx.post(f"{self.gateway.url}{path}", json=body, headers=sent, timeout=30)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with ExitStack() as exits:
        spy = exits.enter_context(ProviderListener())
        internal = exits.enter_context(ProviderListener())
        simulator = exits.enter_context(SimulatorProcess(simulator_config()))
        url = exits.enter_context(postgres_database("plumbline_messages_sec"))
        keys = {
            "admin": issue_key(url, "platform", admin=True),
            "alpha": issue_key(url, "alpha"),
            "beta": issue_key(url, "beta"),
            "gamma": issue_key(url, "gamma"),
        }
        config = gateway_config(simulator.base_url)
        config["models"][0]["allowed_media_domains"] = [ALLOWED_MEDIA_HOST]
        config["models"] += [
            {"name": "spy", "backends": [{"url": spy.url[:-3], "api_key": BACKEND_SECRET}]},
            {
                "name": "hosted",
                "provider": "litellm",
                "litellm_model": "openai/tiny",
                "api_base": internal.url,
            },
        ]
        gateway = GatewayProcess(config, url)
        exits.enter_context(gateway)
        yield Stack(gateway, url, keys, (spy, internal))


@pytest.fixture(scope="module")
def reader(stack: Stack) -> Iterator[CallReader]:
    found = CallReader(stack.database_url)
    yield found
    found.close()


def _ask(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "tiny",
        "max_tokens": 2,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def _with_block(block: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "describe"}, block]
    return {"model": "tiny", "max_tokens": 2, "messages": [{"role": "user", "content": content}]}


def _refused(reader: CallReader, response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error", body
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert call.status_code == status and call.backend is None, "refused before any backend"
    return str(body["error"]["message"])


def _cache_read(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    return int(response.json()["usage"].get("cache_read_input_tokens") or 0)


def test_teams_never_share_the_prefix_cache(stack: Stack) -> None:
    prompt = LONG.format(tag="messages")
    assert _cache_read(stack.post("alpha", PATH, _ask(prompt))) == 0
    assert _cache_read(stack.post("alpha", PATH, _ask(prompt))) > 0, "a team's own hits"
    assert _cache_read(stack.post("beta", PATH, _ask(prompt))) == 0
    # Nor by sending the same salt: the client's salt is mixed into the team's.
    salted = LONG.format(tag="salted")
    assert _cache_read(stack.post("alpha", PATH, _ask(salted, cache_salt="shared"))) == 0
    assert _cache_read(stack.post("beta", PATH, _ask(salted, cache_salt="shared"))) == 0


@pytest.mark.parametrize("path", [PATH, COUNT])
@pytest.mark.parametrize(
    "field",
    [
        {"kv_transfer_params": {"remote_host": "10.0.0.1", "do_remote_prefill": True}},
        {"ec_transfer_params": {"remote_host": "10.0.0.1"}},
        {"vllm_xargs": {"x": 1}},
        {"request_id": "someone-elses"},
        {"cache_salt": "a/b"},
    ],
)
def test_engine_steering_fields_are_refused(
    stack: Stack, reader: CallReader, path: str, field: dict[str, Any]
) -> None:
    _refused(reader, stack.post("alpha", path, _ask("hi", **field)))


def test_url_sources_the_gpu_host_would_fetch_are_refused(stack: Stack, reader: CallReader) -> None:
    target = f"{stack.internal.url[:-3]}/latest/meta-data"
    url_source = {"type": "url", "url": target}
    tool_result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "image", "source": url_source}],
    }
    refused = [
        (_with_block({"type": "image", "source": url_source}), "messages[0].content[1]"),
        (_with_block({"type": "document", "source": url_source}), "messages[0].content[1]"),
        (_with_block(tool_result), "messages[0].content[1].content[0]"),
        (
            _with_block({"type": "image", "source": {"type": "url", "url": ["x"]}}),
            "messages[0].content[1]",
        ),
        (
            _with_block({"type": "image", "source": {"type": "url", "url": "file:///etc/passwd"}}),
            "messages[0].content[1]",
        ),
        (
            _with_block(
                {
                    "type": "image",
                    "source": {"type": "url", "url": f"http://{ALLOWED_MEDIA_HOST}@127.0.0.1/x"},
                }
            ),
            "messages[0].content[1]",
        ),
        (
            {**_ask("hi"), "system": [{"type": "image", "source": url_source}]},
            "system[0]",
        ),
    ]
    for body, place in refused:
        for path in (PATH, COUNT):
            message = _refused(reader, stack.post("alpha", path, body))
            assert f"`{place}.source.url`" in message, message
    assert stack.internal.seen() == (0, [])
    allowed = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": f"https://{ALLOWED_MEDIA_HOST}/a.png"}},
    ]
    for block in allowed:
        response = stack.post("alpha", PATH, _with_block(block))
        assert response.status_code == 200, (block, response.text)


def test_client_headers_reach_nothing_upstream(stack: Stack) -> None:
    before = len(stack.spy.seen()[1])
    response = stack.post(
        "alpha",
        PATH,
        {**_ask("hi"), "model": "spy"},
        **{
            "anthropic-beta": "files-api-2025-04-14",
            "anthropic-version": "2099-01-01",
            "x-forwarded-host": "10.0.0.1",
            "host": "10.0.0.1",
        },
    )
    assert response.status_code == 200, response.text
    contacts = [c for c in stack.spy.seen()[1][before:] if c.path == PATH]
    assert len(contacts) == 1
    headers = contacts[0].headers
    assert headers["authorization"] == f"Bearer {BACKEND_SECRET}"
    assert not {"x-api-key", "anthropic-beta", "anthropic-version", "x-forwarded-host"} & set(
        headers
    )
    assert stack.keys["alpha"] not in str(headers) and "10.0.0.1" not in str(headers)


def test_a_bearer_header_is_the_key_when_both_are_sent(stack: Stack, reader: CallReader) -> None:
    # One key per call: a forged Bearer is refused even beside a real x-api-key.
    forged = stack.post("alpha", PATH, _ask("hi"), Authorization="Bearer pl-forged")
    assert forged.status_code == 401, forged.text
    assert forged.json()["error"]["type"] == "authentication_error"
    assert reader.wait(forged.headers["x-plumbline-call-id"]).team_id is None
    with anthropic.Anthropic(
        base_url=stack.gateway.url,
        default_headers={"x-api-key": "pl-forged"},
        auth_token=stack.keys["beta"],
        max_retries=0,
    ) as beta:
        raw = beta.messages.with_raw_response.create(
            model="tiny", max_tokens=2, messages=[{"role": "user", "content": "hi"}]
        )
    beta_call = reader.wait(raw.headers["x-plumbline-call-id"])
    alpha_call = reader.wait(stack.post("alpha", PATH, _ask("hi")).headers["x-plumbline-call-id"])
    assert beta_call.team_id is not None and beta_call.team_id != alpha_call.team_id


@pytest.mark.parametrize("path", [PATH, COUNT])
def test_a_litellm_model_is_a_clear_anthropic_404(
    stack: Stack, reader: CallReader, path: str
) -> None:
    response = stack.post("alpha", path, {**_ask("hi"), "model": "hosted"})
    assert response.status_code == 404, response.text
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert "litellm" in body["error"]["message"] and path in body["error"]["message"]
    assert stack.internal.seen() == (0, [])
    assert reader.wait(response.headers["x-plumbline-call-id"]).status_code == 404


def test_a_flood_is_a_429_in_anthropics_shape_that_the_sdk_raises(
    stack: Stack, reader: CallReader
) -> None:
    limited = httpx.patch(
        f"{stack.gateway.url}/api/admin/teams/gamma",
        json={"requests_per_minute": 2},
        headers={"Authorization": f"Bearer {stack.keys['admin']}"},
    )
    assert limited.status_code == 200, limited.text
    assert [stack.post("gamma", PATH, _ask("hi")).status_code for _ in range(2)] == [200, 200]
    refused = stack.post("gamma", COUNT, _ask("hi"))
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["type"] == "rate_limit_error"
    with (
        anthropic.Anthropic(
            base_url=stack.gateway.url, api_key=stack.keys["gamma"], max_retries=0
        ) as gamma,
        pytest.raises(anthropic.RateLimitError),
    ):
        gamma.messages.create(
            model="tiny", max_tokens=2, messages=[{"role": "user", "content": "x"}]
        )
    assert reader.wait(refused.headers["x-plumbline-call-id"]).status_code == 429
