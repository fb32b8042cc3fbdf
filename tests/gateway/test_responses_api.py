"""The Responses API through the gateway: as vLLM answers it, recorded, and kept to its team."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest
from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-e2e")
PATH = "/v1/responses"
QUESTION = "What is the indemnity cap in this contract?"
LOGPROBS = "message.output_text.logprobs"
MAX_BODY = 1 << 20
VOLATILE = {
    "id",
    "item_id",
    "created_at",
    "sequence_number",
    "time_to_first_token_ms",
    "generation_time_ms",
    "queue_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
}
BASE: dict[str, Any] = {"model": "tiny", "input": QUESTION, "temperature": 0}
CASES: list[dict[str, Any]] = [
    {**BASE, "max_output_tokens": 6},
    {**BASE, "max_output_tokens": 200},
    {**BASE, "max_output_tokens": 6, "top_logprobs": 2, "include": [LOGPROBS]},
    {**BASE, "max_output_tokens": 6, "top_logprobs": 3},
    {**BASE, "max_output_tokens": 6, "include": ["reasoning.encrypted_content"]},
    {**BASE, "max_output_tokens": 6, "store": True, "instructions": "Be brief."},
    {
        "model": "tiny",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": QUESTION}]}],
        "max_output_tokens": 6,
        "temperature": 0,
    },
    {**BASE, "max_output_tokens": 8, "stream": True},
    {**BASE, "max_output_tokens": 8, "stream": True, "top_logprobs": 2, "include": [LOGPROBS]},
    {**BASE, "include": ["nope"]},
    {**BASE, "top_logprobs": 25, "include": [LOGPROBS]},
    {"model": "tiny"},
    {**BASE, "input": "word " * 600},
]


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    # The store on, as vLLM with VLLM_ENABLE_RESPONSES_API_STORE=1: the riskier server.
    with SimulatorProcess(simulator_config(enable_responses_store=True)) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    recording = {"flush_interval_ms": 20, "in_process": database.startswith("sqlite")}
    config = gateway_config(
        simulator.base_url, recording=recording, limits={"max_body_bytes": MAX_BODY}
    )
    process = GatewayProcess(config, database)
    with process:
        yield process


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k in VOLATILE else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        # vLLM's validation messages count the body's keys, and the gateway adds some.
        return re.sub(r"<dict of \d+ items>", "<dict>", value)
    return value


def _events(body: bytes) -> list[tuple[str, Any]]:
    """Named events, masked, with each run of text deltas folded into one (timing decides it)."""
    out: list[tuple[str, Any]] = []
    for event in (e for e in body.split(b"\n\n") if e):
        head, data = event.split(b"\n", 1)
        name = head.removeprefix(b"event: ").decode()
        payload = _mask(orjson.loads(data.removeprefix(b"data: ")))
        if name.endswith(".delta"):
            if out and out[-1][0] == name:
                continue
            payload.pop("delta")
            payload.pop("logprobs")
        out.append((name, payload))
    return out


def _post(base: str, body: Any, key: str | None, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    headers["Content-Type"] = "application/json"
    return httpx.post(f"{base}{PATH}", content=content, headers=headers, timeout=60, **kwargs)


@pytest.mark.parametrize("case", CASES)
def test_same_answer_with_and_without_the_gateway(
    case: dict[str, Any],
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    simulator.reset()
    direct = _post(simulator.base_url, case, None)
    simulator.reset()
    via = _post(gateway.url, case, team_key)
    assert via.status_code == direct.status_code, via.text
    assert via.headers["content-type"] == direct.headers["content-type"]
    if case.get("stream") and direct.status_code == 200:
        assert _events(via.content) == _events(direct.content)
    else:
        assert _mask(via.json()) == _mask(direct.json())
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == (PATH, via.status_code)


@pytest.mark.parametrize(
    "case", [{"max_output_tokens": "six"}, {"stream": []}, {"include": "all"}, {"store": "x"}]
)
def test_a_value_the_gateway_reads_is_refused_where_vllm_refuses_it(
    case: dict[str, Any], simulator: SimulatorProcess, gateway: GatewayProcess, team_key: str
) -> None:
    direct = _post(simulator.base_url, {**BASE, **case}, None)
    via = _post(gateway.url, {**BASE, **case}, team_key)
    # The gateway reads these itself (its message is its own); vLLM names the same field.
    assert via.status_code == direct.status_code == 400
    assert via.json()["error"]["param"] == direct.json()["error"]["param"]


def _output_text(response: Response) -> ResponseOutputText:
    item = response.output[0]
    assert isinstance(item, ResponseOutputMessage)
    part = item.content[0]
    assert isinstance(part, ResponseOutputText)
    return part


def _completed(events: list[Any]) -> Any:
    return next(e.response for e in events if e.type == "response.completed")


def test_sdk_calls_are_recorded_with_the_backends_usage(
    client: openai.OpenAI, calls: CallReader
) -> None:
    raw = client.responses.with_raw_response.create(
        model="tiny", input=QUESTION, max_output_tokens=12, temperature=0
    )
    response = raw.parse()
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert response.usage is not None
    assert row.prompt_tokens == response.usage.input_tokens
    assert row.completion_tokens == response.usage.output_tokens
    assert row.cached_tokens == response.usage.input_tokens_details.cached_tokens
    assert row.usage_source == "backend"
    assert row.finish_reason == ("length" if response.status == "incomplete" else "stop")
    assert row.input_cost == pytest.approx(response.usage.input_tokens * 0.5 / 1e6)
    assert row.output_cost == pytest.approx(response.usage.output_tokens * 1.5 / 1e6)
    assert row.engine_prefill_ms is not None
    # The gateway asked for logprobs: stored, and not in what the client got.
    assert _output_text(response).logprobs is None
    assert response.top_logprobs is None
    stored = calls.logprobs(row)
    assert stored is not None and len(stored[0]) == response.usage.output_tokens


def test_a_streamed_sdk_call_is_timed(client: openai.OpenAI, calls: CallReader) -> None:
    with client.responses.with_streaming_response.create(
        model="tiny", input=QUESTION, max_output_tokens=20, temperature=0, stream=True
    ) as raw:
        call_id = raw.headers["x-plumbline-call-id"]
        events = list(raw.parse())
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert deltas and all(not e.logprobs for e in deltas)
    final = _completed(events)
    row = calls.wait(call_id)
    assert row.stream and row.prompt_tokens == final.usage.input_tokens
    assert row.completion_tokens == final.usage.output_tokens
    assert row.ttft_ms is not None and row.ttft_ms > 0
    assert row.itl_mean_ms is not None and row.decode_ms is not None
    stored = calls.logprobs(row)
    assert stored is not None and len(stored[0]) >= len(deltas)


def test_logprobs_the_client_asked_for_reach_it_and_are_stored(
    client: openai.OpenAI, calls: CallReader
) -> None:
    raw = client.responses.with_raw_response.create(
        model="tiny",
        input=QUESTION,
        max_output_tokens=6,
        top_logprobs=2,
        include=["message.output_text.logprobs"],
    )
    logprobs = _output_text(raw.parse()).logprobs
    assert logprobs and all(len(e.top_logprobs) == 2 for e in logprobs)
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    stored = calls.logprobs(row)
    assert stored is not None
    assert [e["token"] for e in stored[0]] == [e.token for e in logprobs]


def test_async_sdk_streams_and_bodies(gateway: GatewayProcess, team_key: str) -> None:
    async def both() -> tuple[str, str]:
        async with openai.AsyncOpenAI(
            base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0
        ) as client:
            body = await client.responses.create(
                model="tiny", input=QUESTION, max_output_tokens=8, temperature=0
            )
            stream = await client.responses.create(
                model="tiny", input=QUESTION, max_output_tokens=8, temperature=0, stream=True
            )
            text = "".join(
                [e.delta async for e in stream if e.type == "response.output_text.delta"]
            )
            return body.output_text, text

    body_text, streamed_text = asyncio.run(both())
    assert body_text == streamed_text != ""


@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b'{"model": "tiny", "input": ', 400),
        (b"[1, 2]", 400),
        (b'{"model": "tiny", "input": "hi", "stream": "maybe"}', 400),
        (b'{"model": "tiny", "input": "hi", "top_logprobs": "two"}', 400),
        (b'{"model": "tiny", "input": 5}', 400),
        (b'{"model": "nope", "input": "hi"}', 404),
        (b'{"model": "tiny", "input": "' + b"x" * MAX_BODY + b'"}', 413),
    ],
)
def test_hostile_input_is_a_recorded_4xx(
    gateway: GatewayProcess, team_key: str, calls: CallReader, content: bytes, status: int
) -> None:
    response = _post(gateway.url, content, team_key)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and error["message"]
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == (PATH, status)


@pytest.mark.parametrize(
    ("faults", "status"),
    [
        ({"error": {"rate": 1.0, "status": 500, "after_tokens": 2}}, 500),
        ({"close_mid_stream": {"rate": 1.0, "after_tokens": 2}}, 502),
        ({"garbage": {"rate": 1.0, "after_tokens": 2}}, 502),
    ],
)
def test_a_stream_broken_midway_ends_with_an_error_the_sdk_raises(
    simulator: SimulatorProcess,
    client: openai.OpenAI,
    calls: CallReader,
    faults: dict[str, Any],
    status: int,
) -> None:
    simulator.set_faults(faults)
    try:
        with client.responses.with_streaming_response.create(
            model="tiny", input=QUESTION, max_output_tokens=20, stream=True
        ) as raw:
            call_id = raw.headers["x-plumbline-call-id"]
            with pytest.raises(openai.APIError):
                list(raw.parse())
    finally:
        simulator.set_faults({})
    row = calls.wait(call_id)
    assert (row.status_code, row.endpoint, row.stream) == (status, PATH, True)
    assert row.completion_tokens is not None and row.completion_tokens >= 2
    assert row.ttft_ms is not None
