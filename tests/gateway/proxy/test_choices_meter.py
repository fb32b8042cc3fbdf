"""Stream events are metered, and restored to exactly what the client would get from vLLM."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import LogprobCapture, LogprobMode
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.request_plan import MeasurementPlan, plan_request
from gateway.proxy.upstream_errors import UpstreamProtocolError
from tests.support.captures import capture_events


def _meter(plan: MeasurementPlan, fingerprint: str | None = None) -> ResponseMeter:
    return ChatCompletions().meter(plan, fingerprint)


def _run(events: list[bytes], meter: ResponseMeter) -> list[bytes]:
    out: list[bytes] = []
    for i, event in enumerate(events):
        out.extend(meter.feed(event, float(i)))
    out.extend(meter.flush())
    return out


def _objects(events: list[bytes]) -> list[Any]:
    return [orjson.loads(e[6:]) if not e.startswith(b"data: [DONE]") else "DONE" for e in events]


def _plan(client_payload: dict[str, Any], capture: LogprobCapture) -> MeasurementPlan:
    return plan_request(client_payload, ChatCompletions(), capture)


def test_added_usage_and_logprobs_are_removed_as_vllm_would() -> None:
    upstream = capture_events("chat_stream_usage_logprobs.txt")
    meter = _meter(_plan({"stream": True}, LogprobCapture()))
    # The client asked for a plain stream: no usage, no logprobs.
    out = _run(upstream, meter)
    objects = _objects(out)
    assert objects[-1] == "DONE"
    chunks = objects[:-1]
    assert all(c["choices"] for c in chunks), "the usage chunk must be dropped"
    assert all(choice["logprobs"] is None for c in chunks for choice in c["choices"])
    # Without usage vLLM puts system_fingerprint on the final chunk, and only there.
    assert chunks[-1]["system_fingerprint"] == "vllm-0.32.0-8e90816a"
    assert all("system_fingerprint" not in c for c in chunks[:-1])
    # The key order matches a stream that never had usage.
    expected = capture_events("chat_stream_nousage.txt")
    assert list(chunks[-1]) == list(orjson.loads(expected[-2][6:]))
    # The meter still has what was measured.
    measured = meter.result()
    assert measured.usage == {
        "prompt_tokens": 24,
        "total_tokens": 27,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 0, "created_cache_tokens": 0},
    }
    assert measured.engine_metrics is not None
    assert measured.engine_metrics["queue_time_ms"] == pytest.approx(0.02715100004024862)
    assert len(measured.logprob_chunks) == 3
    assert measured.finish_reason == "length"
    assert measured.token_chunk_times == [1.0, 2.0, 3.0]


def test_nothing_added_means_bytes_pass_through() -> None:
    upstream = capture_events("chat_stream_usage_logprobs.txt")
    client = {
        "stream": True,
        "stream_options": {"include_usage": True},
        "logprobs": True,
        "top_logprobs": 2,
    }
    plan = _plan(client, LogprobCapture(mode=LogprobMode.TOP_K, k=2))
    assert not plan.changed
    assert _run(upstream, _meter(plan)) == upstream


def test_widened_top_k_is_trimmed_back() -> None:
    upstream = capture_events("chat_stream_usage_logprobs.txt")
    client = {
        "stream": True,
        "stream_options": {"include_usage": True},
        "logprobs": True,
        "top_logprobs": 1,
    }
    out = _objects(_run(upstream, _meter(_plan(client, LogprobCapture(k=2)))))
    tops = [e["top_logprobs"] for c in out[1:-2] for e in c["choices"][0]["logprobs"]["content"]]
    assert all(len(t) == 1 for t in tops)


def test_garbage_is_an_upstream_protocol_error() -> None:
    meter = _meter(_plan({"stream": True}, LogprobCapture()))
    with pytest.raises(UpstreamProtocolError):
        meter.feed(b"data: {not json\n\n", 0.0)


def test_error_event_is_recorded_and_passed_on() -> None:
    meter = _meter(_plan({"stream": True}, LogprobCapture()))
    event = b'data: {"error": {"message": "boom", "type": "InternalServerError", "code": 500}}\n\n'
    assert meter.feed(event, 0.0) == [event]
    failure = meter.result().failure
    assert failure is not None and failure.status == 500 and failure.message == "boom"


def _finish_chunk(index: int) -> bytes:
    obj = {
        "id": "x",
        "choices": [
            {
                "index": index,
                "delta": {"content": "a"},
                "logprobs": None,
                "finish_reason": "length",
                "stop_reason": None,
            }
        ],
    }
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def test_every_finishing_chunk_gets_the_known_fingerprint_at_once() -> None:
    transform = _meter(_plan({"stream": True}, LogprobCapture()), "fp-1")
    first = transform.feed(_finish_chunk(0), 0.0)
    assert [orjson.loads(e[6:])["system_fingerprint"] for e in first] == ["fp-1"]
    second = transform.feed(_finish_chunk(1), 1.0)
    assert [orjson.loads(e[6:])["system_fingerprint"] for e in second] == ["fp-1"]


def test_unknown_fingerprint_is_learnt_from_the_usage_chunk() -> None:
    transform = _meter(_plan({"stream": True}, LogprobCapture()))
    assert transform.feed(_finish_chunk(0), 0.0) == []
    assert transform.feed(_finish_chunk(1), 1.0) == []
    usage = (
        b'data: {"choices": [], "usage": {"prompt_tokens": 1}, "system_fingerprint": "fp-2"}\n\n'
    )
    released = transform.feed(usage, 2.0)
    assert [orjson.loads(e[6:])["system_fingerprint"] for e in released] == ["fp-2", "fp-2"]
    assert transform.fingerprint == "fp-2"
