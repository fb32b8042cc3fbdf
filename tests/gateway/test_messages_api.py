"""Anthropic Messages through the gateway: as vLLM answers them, recorded, keyed by x-api-key."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key

pytestmark = pytest.mark.xdist_group("gateway-e2e")
PATH = "/v1/messages"
COUNT = "/v1/messages/count_tokens"
QUESTION = "What is the indemnity cap in this contract?"
MAX_BODY = 1 << 20
# The SDK has no `temperature` any more; vLLM still reads it.
NO_SAMPLING = {"temperature": 0}
BASE: dict[str, Any] = {
    "model": "tiny",
    "max_tokens": 8,
    "temperature": 0,
    "messages": [{"role": "user", "content": QUESTION}],
}
CASES: list[tuple[str, dict[str, Any]]] = [
    (PATH, BASE),
    (PATH, {**BASE, "max_tokens": 200}),
    (PATH, {**BASE, "system": "Answer briefly."}),
    (PATH, {**BASE, "system": [{"type": "text", "text": "Be brief."}], "stop_sequences": ["x"]}),
    (PATH, {**BASE, "stream": True}),
    (PATH, {**BASE, "stream": True, "system": "Answer briefly."}),
    (PATH, {**BASE, "messages": [{"role": "user", "content": "word " * 600}]}),
    (PATH, {**BASE, "messages": [{"role": "user", "content": "word " * 600}], "stream": True}),
    (PATH, {"model": "tiny", "max_tokens": 8}),
    (PATH, {**BASE, "max_tokens": 0}),
    (COUNT, {"model": "tiny", "messages": BASE["messages"], "system": "Answer briefly."}),
    (COUNT, {"model": "tiny"}),
]


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database("plumbline_messages") as url:
        yield url


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(simulator.base_url, limits={"max_body_bytes": MAX_BODY})
    process = GatewayProcess(config, database)
    with process:
        yield process


@pytest.fixture(scope="module")
def team_key(database: str) -> str:
    return issue_key(database, "team-a")


@pytest.fixture(scope="module")
def client(gateway: GatewayProcess, team_key: str) -> Iterator[anthropic.Anthropic]:
    # `api_key` is sent as `x-api-key`, as every anthropic SDK user sends it.
    with anthropic.Anthropic(base_url=gateway.url, api_key=team_key, max_retries=0) as c:
        yield c


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k == "id" else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        # vLLM's validation messages count the body's keys, and the gateway adds a salt.
        return re.sub(r"<dict of \d+ items>", "<dict>", value)
    return value


def _events(body: bytes) -> list[tuple[str, Any]]:
    """Named events, masked, each run of text deltas folded into one (timing cuts them)."""
    out: list[tuple[str, Any]] = []
    text = ""
    for event in (e for e in body.split(b"\n\n") if e):
        head, data = event.split(b"\n", 1)
        name = head.removeprefix(b"event: ").decode()
        payload = _mask(orjson.loads(data.removeprefix(b"data: ")))
        if name == "content_block_delta":
            text += payload["delta"].pop("text")
            if out and out[-1][0] == name:
                continue
        out.append((name, payload))
    return [*out, ("text", text)]


def _post(base: str, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    sent = {"Content-Type": "application/json", "anthropic-version": "2023-06-01", **headers}
    return httpx.post(f"{base}{path}", content=content, headers=sent, timeout=60)


@pytest.mark.parametrize(("path", "case"), CASES)
def test_same_answer_with_and_without_the_gateway(
    path: str,
    case: dict[str, Any],
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    simulator.reset()
    direct = _post(simulator.base_url, path, case, {"x-api-key": "unused"})
    simulator.reset()
    via = _post(gateway.url, path, case, {"x-api-key": team_key})
    assert via.status_code == direct.status_code, via.text
    assert via.headers["content-type"] == direct.headers["content-type"]
    if case.get("stream") and direct.status_code == 200:
        assert _events(via.content) == _events(direct.content)
    else:
        assert _mask(via.json()) == _mask(direct.json())
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == (path, via.status_code)


def test_sdk_calls_are_recorded_with_the_backends_usage(
    client: anthropic.Anthropic, calls: CallReader
) -> None:
    raw = client.messages.with_raw_response.create(
        model="tiny",
        max_tokens=12,
        extra_body=NO_SAMPLING,
        messages=[{"role": "user", "content": QUESTION}],
    )
    message = raw.parse()
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    usage = message.usage
    cached = usage.cache_read_input_tokens or 0
    assert row.prompt_tokens == usage.input_tokens + cached + (
        usage.cache_creation_input_tokens or 0
    )
    assert row.completion_tokens == usage.output_tokens and row.cached_tokens == cached
    assert row.usage_source == "backend" and not row.stream
    assert (
        row.finish_reason == {"max_tokens": "length", "end_turn": "stop"}[str(message.stop_reason)]
    )
    assert row.input_cost == pytest.approx(row.prompt_tokens * 0.5 / 1e6)
    assert row.output_cost == pytest.approx(usage.output_tokens * 1.5 / 1e6)
    # vLLM's Messages API has neither logprobs nor per-request metrics.
    assert calls.logprobs(row) is None and row.logprob_mode is None
    assert row.engine_prefill_ms is None


def test_the_same_prompt_twice_records_its_cache_hit(
    simulator: SimulatorProcess, client: anthropic.Anthropic, calls: CallReader
) -> None:
    simulator.reset()
    content = "The indemnity clause covers losses and damages. " * 8
    rows = []
    for _ in range(2):
        raw = client.messages.with_raw_response.create(
            model="tiny", max_tokens=2, messages=[{"role": "user", "content": content}]
        )
        usage = raw.parse().usage
        row = calls.wait(raw.headers["x-plumbline-call-id"])
        assert row.prompt_tokens == usage.input_tokens + (usage.cache_read_input_tokens or 0)
        rows.append(row)
    assert rows[0].cached_tokens == 0 and (rows[1].cached_tokens or 0) > 0
    assert rows[0].prompt_tokens == rows[1].prompt_tokens


def test_a_streamed_sdk_call_is_timed(client: anthropic.Anthropic, calls: CallReader) -> None:
    with client.messages.stream(
        model="tiny",
        max_tokens=20,
        extra_body=NO_SAMPLING,
        messages=[{"role": "user", "content": QUESTION}],
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
        call_id = stream.response.headers["x-plumbline-call-id"]
    assert final.content[0].type == "text" and final.content[0].text == text
    row = calls.wait(call_id)
    assert row.stream and row.completion_tokens == final.usage.output_tokens
    assert row.prompt_tokens == final.usage.input_tokens + (
        final.usage.cache_read_input_tokens or 0
    )
    assert row.ttft_ms is not None and row.ttft_ms > 0
    assert row.itl_mean_ms is not None and row.decode_ms is not None
    assert calls.logprobs(row) is None


def test_async_sdk_streams_and_bodies(gateway: GatewayProcess, team_key: str) -> None:
    async def both() -> tuple[str, str]:
        async with anthropic.AsyncAnthropic(
            base_url=gateway.url, api_key=team_key, max_retries=0
        ) as client:
            messages: Any = [{"role": "user", "content": QUESTION}]
            body = await client.messages.create(
                model="tiny", max_tokens=8, extra_body=NO_SAMPLING, messages=messages
            )
            async with client.messages.stream(
                model="tiny", max_tokens=8, extra_body=NO_SAMPLING, messages=messages
            ) as stream:
                streamed = "".join([t async for t in stream.text_stream])
            block = body.content[0]
            return (block.text if block.type == "text" else ""), streamed

    body_text, streamed_text = asyncio.run(both())
    assert body_text == streamed_text != ""


def test_count_tokens_is_passed_through_and_recorded_without_usage(
    client: anthropic.Anthropic, simulator: SimulatorProcess, calls: CallReader
) -> None:
    messages: Any = [{"role": "user", "content": QUESTION}]
    raw = client.messages.with_raw_response.count_tokens(model="tiny", messages=messages)
    direct = httpx.post(
        f"{simulator.base_url}{COUNT}", json={"model": "tiny", "messages": messages}
    )
    assert raw.http_response.content == direct.content
    assert raw.parse().input_tokens == direct.json()["input_tokens"] > 0
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.model) == (COUNT, 200, "tiny")
    assert row.prompt_tokens is None and row.completion_tokens is None and not row.input_cost


def test_the_key_goes_in_x_api_key_or_as_a_bearer_token(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    messages: Any = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(base_url=gateway.url, auth_token=team_key, max_retries=0) as bearer:
        assert bearer.messages.create(model="tiny", max_tokens=2, messages=messages).content
    with (
        anthropic.Anthropic(base_url=gateway.url, api_key="pl-nope", max_retries=0) as wrong,
        pytest.raises(anthropic.AuthenticationError) as refused,
    ):
        wrong.messages.create(model="tiny", max_tokens=2, messages=messages)
    missing = _post(gateway.url, PATH, BASE, {})
    assert missing.status_code == 401
    assert "x-api-key" in missing.json()["error"]["message"]
    for response in (refused.value.response, missing):
        assert response.json()["type"] == "error"
        assert response.json()["error"]["type"] == "authentication_error"
        row = calls.wait(response.headers["x-plumbline-call-id"])
        assert (row.endpoint, row.status_code, row.team_id) == (PATH, 401, None)


@pytest.mark.parametrize(
    ("content", "status", "param"),
    [
        (b'{"model": "tiny", "messages": ', 400, "body"),
        (b"[1, 2]", 400, "body"),
        (b'{"model": "tiny", "max_tokens": 4, "messages": [], "stream": "maybe"}', 400, ""),
        (b'{"model": "tiny", "max_tokens": "six", "messages": []}', 400, ""),
        (b'{"model": "tiny", "max_tokens": [4], "messages": []}', 400, ""),
        (b'{"model": "tiny", "messages": []}', 400, ""),
        (b'{"max_tokens": 4, "messages": []}', 400, ""),
        (b'{"model": 7, "max_tokens": 4, "messages": []}', 400, ""),
        (b'{"model": "nope", "max_tokens": 4, "messages": []}', 404, ""),
        (b'{"model": "tiny", "max_tokens": 4, "kv_transfer_params": {"a": 1}}', 400, ""),
        (b'{"model": "tiny", "max_tokens": 4, "x": "' + b"x" * MAX_BODY + b'"}', 413, ""),
        (
            b'{"model": "tiny", "max_tokens": 4, "messages": ' + b"[" * 300 + b"]" * 300 + b"}",
            400,
            "",
        ),
    ],
)
def test_hostile_input_is_an_anthropic_shaped_recorded_4xx(
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
    content: bytes,
    status: int,
    param: str,
) -> None:
    response = _post(gateway.url, PATH, content, {"x-api-key": team_key})
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error", body
    expected = {400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large"}
    assert body["error"]["type"] == expected[status] and body["error"]["message"]
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.backend) == (PATH, status, None)


def test_a_body_vllm_refuses_gets_vllms_own_error(
    simulator: SimulatorProcess, gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    # The gateway reads model, stream and max_tokens; the rest of the schema is vLLM's to judge.
    case = {**BASE, "messages": [{"role": "robot", "content": "hi"}]}
    direct = _post(simulator.base_url, PATH, case, {})
    via = _post(gateway.url, PATH, case, {"x-api-key": team_key})
    assert (via.status_code, _mask(via.json())) == (direct.status_code, _mask(direct.json()))
    assert via.status_code == 400
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert row.status_code == 400 and row.backend is not None


def test_a_stream_broken_midway_ends_with_an_error_event_the_sdk_raises(
    simulator: SimulatorProcess, client: anthropic.Anthropic, calls: CallReader
) -> None:
    cases = [
        ({"error": {"rate": 1.0, "status": 500, "after_tokens": 2}}, 500, "internal_error"),
        ({"close_mid_stream": {"rate": 1.0, "after_tokens": 2}}, 502, "api_error"),
    ]
    messages: Any = [{"role": "user", "content": QUESTION}]
    for faults, status, error_type in cases:
        simulator.set_faults(faults)
        try:
            with client.messages.with_streaming_response.create(
                model="tiny", max_tokens=20, messages=messages, stream=True
            ) as raw:
                call_id = raw.headers["x-plumbline-call-id"]
                body = raw.read()
        finally:
            simulator.set_faults({})
        last = body.rstrip(b"\n").split(b"\n\n")[-1]
        assert last.startswith(b"event: error\ndata: "), body
        assert orjson.loads(last.split(b"data: ", 1)[1])["error"]["type"] == error_type
        row = calls.wait(call_id)
        assert (row.status_code, row.endpoint, row.stream) == (status, PATH, True)
        assert row.completion_tokens is not None and row.completion_tokens >= 1
        assert row.ttft_ms is not None


def test_the_call_view_says_why_there_are_no_logprobs(
    client: anthropic.Anthropic, gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    raw = client.messages.with_raw_response.create(
        model="tiny", max_tokens=4, messages=[{"role": "user", "content": QUESTION}]
    )
    chat = httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tiny", "max_tokens": 4, "messages": BASE["messages"]},
        headers={"Authorization": f"Bearer {team_key}"},
    )
    auth = {"Authorization": f"Bearer {team_key}"}
    details = {}
    for call_id in (raw.headers["x-plumbline-call-id"], chat.headers["x-plumbline-call-id"]):
        calls.wait(call_id)
        details[call_id] = httpx.get(f"{gateway.url}/api/calls/{call_id}", headers=auth).json()
    messages_view, chat_view = details.values()
    assert messages_view["logprobs"] is None
    assert "Messages API takes no logprobs" in messages_view["logprobs_note"]
    assert chat_view["logprobs"] is not None and chat_view["logprobs_note"] is None
