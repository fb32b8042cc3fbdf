"""Each fault mode, forced per request by X-Sim-Fault or switched on through /_sim/faults."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest

from simulator.process import SimulatorProcess

ASK = [{"role": "user", "content": "Tell me a story."}]
STREAM = {
    "messages": ASK,
    "max_tokens": 8,
    "ignore_eos": True,
    "stream": True,
    "stream_options": {"include_usage": True},
}


@pytest.fixture(scope="module")
def faulty() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": {"decode_ms_per_token": 5.0}}) as sim:
        yield sim


@pytest.fixture
def fault_http(faulty: SimulatorProcess) -> Iterator[httpx.Client]:
    faulty.set_faults({})
    with httpx.Client(base_url=faulty.base_url, timeout=30.0) as http:
        yield http
    faulty.set_faults({})


def _drain(items: Iterable[object], into: list[object]) -> None:
    """Collect items until the iterator ends or raises."""
    for item in items:
        into.append(item)


def _events(response: httpx.Response) -> list[bytes]:
    return [block for block in response.content.split(b"\n\n") if block.strip()]


def test_forced_error_has_vllm_shape(fault_http: httpx.Client) -> None:
    response = fault_http.post(
        "/v1/chat/completions", json={"messages": ASK}, headers={"X-Sim-Fault": "error; status=429"}
    )
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["type"] == "TooManyRequestsError"
    assert error["code"] == 429
    assert set(error) == {"message", "type", "param", "code"}


def test_error_rate_applies_to_every_request(faulty: SimulatorProcess) -> None:
    faulty.set_faults({"error": {"rate": 1.0, "status": 503}})
    with openai.OpenAI(base_url=f"{faulty.base_url}/v1", api_key="x", max_retries=0) as sdk:
        with pytest.raises(openai.InternalServerError) as caught:
            sdk.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}])
        assert caught.value.status_code == 503
        faulty.set_faults({})
        ok = sdk.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}])
    assert ok.choices
    assert faulty.stats()["faults_injected"]["error"] >= 1


def test_error_after_stream_began_is_an_sse_event(fault_http: httpx.Client) -> None:
    headers = {"X-Sim-Fault": "error; status=500; after_tokens=2"}
    response = fault_http.post("/v1/chat/completions", json=STREAM, headers=headers)
    assert response.status_code == 200
    events = _events(response)
    assert len(events) == 5  # role, two tokens, error, [DONE]
    error = orjson.loads(events[3].removeprefix(b"data: "))
    assert error["error"]["type"] == "InternalServerError"
    assert events[4] == b"data: [DONE]"


def test_sdk_raises_on_a_mid_stream_error(faulty: SimulatorProcess) -> None:
    with openai.OpenAI(base_url=f"{faulty.base_url}/v1", api_key="x", max_retries=0) as sdk:
        stream = sdk.chat.completions.create(
            model="tiny",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            max_tokens=8,
            extra_headers={"X-Sim-Fault": "error; after_tokens=3"},
            extra_body={"ignore_eos": True},
        )
        received: list[object] = []
        with pytest.raises(openai.APIError):
            _drain(stream, received)
    assert len(received) == 4


def test_stall_before_first_byte(fault_http: httpx.Client) -> None:
    started = time.perf_counter()
    with fault_http.stream(
        "POST",
        "/v1/chat/completions",
        json=STREAM,
        headers={"X-Sim-Fault": "stall_first_byte; seconds=0.6"},
    ) as response:
        waited = time.perf_counter() - started
        body = response.read()
    assert waited >= 0.55
    assert body.endswith(b"data: [DONE]\n\n")


def test_stall_mid_stream(fault_http: httpx.Client) -> None:
    headers = {"X-Sim-Fault": "stall_mid_stream; after_tokens=2; seconds=0.6"}
    arrivals: list[float] = []
    with fault_http.stream("POST", "/v1/chat/completions", json=STREAM, headers=headers) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: "):
                arrivals.append(time.perf_counter())
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert max(gaps) >= 0.55
    assert gaps.index(max(gaps)) == 2  # after role chunk and two tokens
    assert len(arrivals) >= 5


def test_connection_closed_mid_stream(fault_http: httpx.Client) -> None:
    headers = {"X-Sim-Fault": "close_mid_stream; after_tokens=2"}
    seen: list[object] = []
    with fault_http.stream("POST", "/v1/chat/completions", json=STREAM, headers=headers) as resp:
        lines = (line for line in resp.iter_lines() if line)
        with pytest.raises(httpx.RemoteProtocolError):
            _drain(lines, seen)
    assert len(seen) == 3
    assert not any("[DONE]" in str(line) for line in seen)


def test_connection_closed_mid_body(fault_http: httpx.Client) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        fault_http.post(
            "/v1/chat/completions",
            json={"messages": ASK},
            headers={"X-Sim-Fault": "close_mid_stream"},
        )


def test_garbage_body(fault_http: httpx.Client) -> None:
    response = fault_http.post(
        "/v1/chat/completions", json={"messages": ASK}, headers={"X-Sim-Fault": "garbage"}
    )
    assert response.status_code == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(response.content)


def test_garbage_mid_stream(fault_http: httpx.Client) -> None:
    headers = {"X-Sim-Fault": "garbage; after_tokens=2"}
    response = fault_http.post("/v1/chat/completions", json=STREAM, headers=headers)
    events = _events(response)
    assert all(event.startswith(b"data: {") for event in events[:3])
    assert not events[3].startswith(b"data:")
    assert b"[DONE]" not in response.content


def test_engine_dead_mode(faulty: SimulatorProcess, fault_http: httpx.Client) -> None:
    faulty.set_timing({"decode_ms_per_token": 50.0})
    try:
        slow = {**STREAM, "max_tokens": 60}
        with fault_http.stream("POST", "/v1/chat/completions", json=slow) as resp:
            lines = resp.iter_lines()
            first = next(line for line in lines if line)
            assert "assistant" in first
            faulty.set_faults({"engine_dead": True})
            rest = [line for line in lines if line]
        assert rest[-1] == "data: [DONE]"
        error: dict[str, Any] = orjson.loads(rest[-2].removeprefix("data: "))
        assert error["error"]["type"] == "InternalServerError"
        assert fault_http.get("/health").status_code == 503
        dead = fault_http.post("/v1/chat/completions", json={"messages": ASK})
        assert dead.status_code == 500
        assert dead.json()["error"]["type"] == "InternalServerError"
        faulty.set_faults({})
        assert fault_http.get("/health").status_code == 200
    finally:
        faulty.set_timing({"decode_ms_per_token": 5.0})


def test_engine_dead_forced_for_one_request(fault_http: httpx.Client) -> None:
    dead = fault_http.post(
        "/v1/completions", json={"prompt": "hi"}, headers={"X-Sim-Fault": "engine_dead"}
    )
    assert dead.status_code == 500
    assert fault_http.post("/v1/completions", json={"prompt": "hi"}).status_code == 200


def test_bad_fault_header_is_a_400(fault_http: httpx.Client) -> None:
    response = fault_http.post(
        "/v1/chat/completions", json={"messages": ASK}, headers={"X-Sim-Fault": "explode"}
    )
    assert response.status_code == 400
    assert "Unknown X-Sim-Fault kind" in response.json()["error"]["message"]


def test_a_stall_before_the_first_byte_is_not_queue_time(fault_http: httpx.Client) -> None:
    response = fault_http.post(
        "/v1/chat/completions",
        json={"messages": ASK, "max_tokens": 2},
        headers={"X-Sim-Fault": "stall_first_byte; seconds=0.4"},
    )
    elapsed_ms = response.elapsed.total_seconds() * 1000
    queue_ms = response.json()["metrics"]["queue_time_ms"]
    print(f"elapsed {elapsed_ms:.0f} ms, queue time {queue_ms:.1f} ms")
    assert elapsed_ms >= 350
    # The queue comes after the 0.4 s stall, inside the client's elapsed time: were the stall
    # counted as queue time, the queue alone would be 0.4 s or more.
    assert queue_ms <= elapsed_ms - 350
