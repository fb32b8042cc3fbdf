"""The anthropic SDK against the real vLLM, directly and through the gateway: the same messages.

vLLM 0.32 serves the Anthropic Messages API (`/v1/messages`, `count_tokens`) by running a chat
completion. Requests are greedy so both calls generate the same tokens, and prompts stay under
one prefix-cache block (128 tokens) so neither call hits the cache; only ids differ. The rows
the gateway records are checked against the usage vLLM sent.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import orjson
import pytest

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]
PATH = "/v1/messages"
COUNT = "/v1/messages/count_tokens"
MESSAGES: Any = [{"role": "user", "content": "What is the capital of France?"}]
# The SDK has no `temperature` any more; vLLM still reads it.
GREEDY: dict[str, Any] = {"temperature": 0}
ASKS: list[dict[str, Any]] = [
    {"max_tokens": 6},
    {"max_tokens": 12, "system": "Answer briefly."},
    {"max_tokens": 12, "stop_sequences": ["a", "e"]},
    {"max_tokens": 4, "system": [{"type": "text", "text": "Be brief."}]},
]


@pytest.fixture
def direct(vllm_server: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=vllm_server, api_key="unused", max_retries=0) as sdk:
        yield sdk


@pytest.fixture
def via(vllm_gateway: GatewayProcess, gateway_key: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=vllm_gateway.url, api_key=gateway_key, max_retries=0) as sdk:
        yield sdk


def _masked(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = message.model_dump()
    data.pop("id")
    return data


def _events(body: bytes) -> list[tuple[str, Any]]:
    """Every event by name, ids masked; text deltas and their text kept one for one."""
    out = []
    for event in (e for e in body.split(b"\n\n") if e):
        head, data = event.split(b"\n", 1)
        payload = orjson.loads(data.removeprefix(b"data: "))
        if payload.get("type") == "message_start":
            payload["message"].pop("id")
        out.append((head.removeprefix(b"event: ").decode(), payload))
    return out


def _fold(events: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The events with each run of text deltas as one, for streams the engine cut differently."""
    out: list[tuple[str, Any]] = []
    for name, payload in events:
        if name == "content_block_delta" and out and out[-1][0] == name:
            out[-1][1]["delta"]["text"] += payload["delta"]["text"]
            continue
        out.append((name, payload))
    return out


@pytest.mark.parametrize("ask", ASKS)
def test_sync_messages_are_identical_and_recorded(
    ask: dict[str, Any],
    direct: anthropic.Anthropic,
    via: anthropic.Anthropic,
    calls: CallReader,
) -> None:
    expected = direct.messages.create(model="tiny", messages=MESSAGES, extra_body=GREEDY, **ask)
    raw = via.messages.with_raw_response.create(
        model="tiny", messages=MESSAGES, extra_body=GREEDY, **ask
    )
    got = raw.parse()
    assert _masked(got) == _masked(expected)
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    usage = got.usage
    cached = usage.cache_read_input_tokens or 0
    assert row.prompt_tokens == usage.input_tokens + cached + (
        usage.cache_creation_input_tokens or 0
    )
    assert (row.completion_tokens, row.cached_tokens) == (usage.output_tokens, cached)
    assert (row.endpoint, row.status_code, row.usage_source) == (PATH, 200, "backend")
    stop = {"max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop"}
    assert row.finish_reason == stop[str(got.stop_reason)]
    assert row.input_cost == pytest.approx((row.prompt_tokens or 0) * 0.5 / 1e6)
    # vLLM's Messages API has no logprobs and sends no per-request metrics.
    assert calls.logprobs(row) is None and row.engine_prefill_ms is None


def test_streams_are_the_same_events_and_timed(
    vllm_server: str, vllm_gateway: GatewayProcess, gateway_key: str, calls: CallReader
) -> None:
    body = {"model": "tiny", "max_tokens": 8, "messages": MESSAGES, "stream": True, **GREEDY}
    direct = httpx.post(f"{vllm_server}{PATH}", json=body, timeout=60)
    gateway = httpx.post(
        f"{vllm_gateway.url}{PATH}", json=body, headers={"x-api-key": gateway_key}, timeout=60
    )
    assert gateway.headers["content-type"] == direct.headers["content-type"]
    ours, theirs = _events(gateway.content), _events(direct.content)
    names = [name for name, _ in theirs]
    assert names[:2] == ["message_start", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    # One for one where vLLM cut both streams alike; always alike once text runs are joined.
    assert ours == theirs if len(ours) == len(theirs) else _fold(ours) == _fold(theirs)
    row = calls.wait(gateway.headers["x-plumbline-call-id"])
    final = ours[-2][1]["usage"]
    assert row.stream and row.completion_tokens == final["output_tokens"]
    assert row.prompt_tokens == final["input_tokens"] + final.get("cache_read_input_tokens", 0)
    assert row.ttft_ms is not None and row.ttft_ms > 0 and row.decode_ms is not None


def test_sdk_streams_sync_and_async_say_the_same(
    vllm_server: str, vllm_gateway: GatewayProcess, gateway_key: str, direct: anthropic.Anthropic
) -> None:
    with direct.messages.stream(
        model="tiny", max_tokens=8, messages=MESSAGES, extra_body=GREEDY
    ) as stream:
        expected = _masked(stream.get_final_message())

    async def through_gateway() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with (
            anthropic.AsyncAnthropic(
                base_url=vllm_gateway.url, api_key=gateway_key, max_retries=0
            ) as ours,
            anthropic.AsyncAnthropic(base_url=vllm_server, api_key="unused", max_retries=0) as raw,
        ):
            async with ours.messages.stream(
                model="tiny", max_tokens=8, messages=MESSAGES, extra_body=GREEDY
            ) as stream:
                streamed = _masked(await stream.get_final_message())
            body = await ours.messages.create(
                model="tiny", max_tokens=8, messages=MESSAGES, extra_body=GREEDY
            )
            plain = await raw.messages.create(
                model="tiny", max_tokens=8, messages=MESSAGES, extra_body=GREEDY
            )
            return streamed, _masked(body), _masked(plain)

    streamed, body, plain = asyncio.run(through_gateway())
    assert streamed == expected and body == plain


def test_count_tokens_are_the_same_bytes(
    direct: anthropic.Anthropic, via: anthropic.Anthropic, calls: CallReader
) -> None:
    ask: dict[str, Any] = {"model": "tiny", "messages": MESSAGES, "system": "Answer briefly."}
    expected = direct.messages.with_raw_response.count_tokens(**ask)
    got = via.messages.with_raw_response.count_tokens(**ask)
    assert got.http_response.content == expected.http_response.content
    assert got.parse().input_tokens > 0
    row = calls.wait(got.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.prompt_tokens) == (COUNT, 200, None)


@pytest.mark.parametrize(
    "body",
    [
        {"model": "tiny", "max_tokens": 4, "messages": [{"role": "robot", "content": "hi"}]},
        {"model": "tiny", "max_tokens": 4, "messages": MESSAGES, "tools": [{"name": "x"}]},
        {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "w " * 600}]},
        {"model": "tiny", "messages": "hi"},
    ],
)
def test_vllms_own_errors_pass_as_vllm_sent_them(
    body: dict[str, Any],
    vllm_server: str,
    vllm_gateway: GatewayProcess,
    gateway_key: str,
    calls: CallReader,
) -> None:
    path = COUNT if "max_tokens" not in body else PATH
    direct = httpx.post(f"{vllm_server}{path}", json=body, timeout=60)
    gateway = httpx.post(
        f"{vllm_gateway.url}{path}", json=body, headers={"x-api-key": gateway_key}, timeout=60
    )
    assert gateway.status_code == direct.status_code and 400 <= direct.status_code < 500
    # vLLM's schema messages count the body's keys; the gateway added the team's cache salt.
    count = re.compile(rb"<dict of \d+ items>")
    assert count.sub(b"", gateway.content) == count.sub(b"", direct.content)
    row = calls.wait(gateway.headers["x-plumbline-call-id"])
    assert row.status_code == direct.status_code and row.backend is not None


@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b'{"model": "tiny", "messages": ', 400),
        (b'{"model": "tiny", "max_tokens": "six", "messages": []}', 400),
        (b'{"model": "tiny", "max_tokens": 4, "stream": "maybe", "messages": []}', 400),
        (b'{"model": "tiny", "messages": []}', 400),
        (b'{"model": "nope", "max_tokens": 4, "messages": []}', 404),
    ],
)
def test_what_the_gateway_reads_is_refused_in_anthropics_shape(
    content: bytes, status: int, vllm_gateway: GatewayProcess, gateway_key: str, vllm_server: str
) -> None:
    headers = {"x-api-key": gateway_key, "content-type": "application/json"}
    gateway = httpx.post(f"{vllm_gateway.url}{PATH}", content=content, headers=headers)
    direct = httpx.post(f"{vllm_server}{PATH}", content=content, headers=headers)
    # vLLM refuses these too, with the same status; the gateway answers in the route's shape.
    assert gateway.status_code == direct.status_code == status
    assert gateway.json()["type"] == "error" and gateway.json()["error"]["message"]
