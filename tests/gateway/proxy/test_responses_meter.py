"""The Responses meter, on real vLLM 0.32 captures: metered, and restored to vLLM's own bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from gateway.config import LogprobCapture, ModelConfig
from gateway.errors import GatewayError
from gateway.proxy.call_kinds.responses import Responses
from gateway.proxy.request_plan import MeasurementPlan, plan_request
from plumbline import logprob_codec

CAPTURES = Path(__file__).parents[2] / "fixtures" / "vllm_routes"
# Differ between any two responses, even to the same request.
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


def _capture(name: str) -> dict[str, Any]:
    return dict(json.loads((CAPTURES / f"{name}.json").read_text()))


def _text(name: str) -> bytes:
    return str(_capture(name)["text"]).encode()


def _events(name: str) -> list[bytes]:
    return [e + b"\n\n" for e in _text(name).split(b"\n\n") if e]


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k in VOLATILE else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _named(events: list[bytes]) -> list[tuple[str, Any]]:
    """Each event's name and masked payload, runs of text deltas folded into one."""
    out: list[tuple[str, Any]] = []
    for event in events:
        head, data = event.split(b"\n", 1)
        name = head.removeprefix(b"event: ").decode()
        if name == "response.output_text.delta" and out and out[-1][0] == name:
            continue
        payload = _mask(orjson.loads(data.removeprefix(b"data: ")))
        if name == "response.output_text.delta":
            payload.pop("delta")
        out.append((name, payload))
    return out


def _plan(client: dict[str, Any], k: int = 2) -> tuple[MeasurementPlan, dict[str, Any]]:
    payload = dict(client)
    kind = Responses()
    fields = kind.read_fields(payload)
    plan = plan_request(payload, kind, LogprobCapture(k=k), fields)
    _place(payload, plan)
    return plan, payload


# A model without `responses_store`: its placement reads no state.
UNSTORED = ModelConfig.model_validate({"name": "tiny", "backends": [{"url": "http://127.0.0.1:9"}]})


def _place(payload: dict[str, Any], plan: MeasurementPlan) -> None:
    asyncio.run(Responses().place(cast(Any, None), payload, UNSTORED, plan, 1))


def test_added_logprobs_are_asked_for_and_removed_from_a_body() -> None:
    plan, upstream = _plan({"model": "tiny", "input": "hi"})
    assert upstream["include"] == ["message.output_text.logprobs"]
    assert upstream["top_logprobs"] == 2
    assert upstream["store"] is False
    assert "stream_options" not in upstream
    meter = Responses().meter(plan, None)
    out = meter.body(_text("resp_logprobs"), 200)
    assert _mask(orjson.loads(out)) == _mask(orjson.loads(_text("resp_plain")))
    # Cut as bytes: the rest of the body is vLLM's own, byte for byte.
    assert b'"logprobs":null' in out and b'"top_logprobs":null,"truncation"' in out
    measured = meter.result()
    assert measured.usage == {
        "prompt_tokens": 13,
        "completion_tokens": 6,
        "total_tokens": 19,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    assert measured.finish_reason == "length"
    assert measured.engine_metrics is not None
    assert "time_to_first_token_ms" in measured.engine_metrics
    document = logprob_codec.per_choice_json(logprob_codec.CHAT, measured.logprob_chunks)
    entries = orjson.loads(document)["0"]
    assert [e["token"] for e in entries] == [" week", "al", "ck", " day", "C", ""]
    assert all(len(e["top_logprobs"]) == 2 for e in entries)


def test_added_logprobs_are_removed_from_each_stream_event() -> None:
    plan, _ = _plan({"model": "tiny", "input": "hi", "stream": True})
    meter = Responses().meter(plan, None)
    out: list[bytes] = []
    for i, event in enumerate(_events("resp_stream_logprobs")):
        out.extend(meter.feed(event, float(i)))
    out.extend(meter.flush())
    assert meter.done
    assert _named(out) == _named(_events("resp_stream"))
    measured = meter.result()
    assert measured.usage is not None
    assert measured.usage["completion_tokens"] == 6
    assert measured.finish_reason == "length"
    assert measured.token_chunk_times == [4.0, 5.0, 6.0, 7.0, 8.0]
    assert measured.completion_tokens_seen == 5
    document = logprob_codec.per_choice_json(logprob_codec.CHAT, measured.logprob_chunks)
    assert [e["token"] for e in orjson.loads(document)["0"]] == [" week", "al", "ck", " day", "C"]


def test_logprobs_the_client_asked_for_are_captured_and_left_alone() -> None:
    client = {"input": "hi", "top_logprobs": 2, "include": ["message.output_text.logprobs"]}
    plan, upstream = _plan(client, k=5)
    assert upstream["top_logprobs"] == 2 and not plan.strip_logprobs
    meter = Responses().meter(plan, None)
    body = _text("resp_logprobs")
    assert meter.body(body, 200) is body
    assert plan.captured_k == 2
    assert len(meter.result().logprob_chunks) == 1
    stream = Responses().meter(_plan({**client, "stream": True}, k=5)[0], None)
    events = _events("resp_stream_logprobs")
    assert [b for e in events for b in stream.feed(e, 0.0)] == events


def test_a_plain_stream_passes_untouched_when_nothing_was_added() -> None:
    kind = Responses()
    payload = {"input": "hi", "stream": True}
    plan = plan_request(payload, kind, LogprobCapture(mode="off"), kind.read_fields(payload))
    meter = kind.meter(plan, None)
    events = _events("resp_stream")
    assert [b for e in events for b in meter.feed(e, 1.0)] == events
    assert meter.done and meter.result().completion_tokens_seen == 4


def test_an_event_in_another_layout_is_parsed_and_restored() -> None:
    plan, _ = _plan({"input": "hi", "stream": True})
    meter = Responses().meter(plan, None)
    odd = b'{"delta":"x","logprobs":[{"logprob":-1.0,"token":"x","top_logprobs":[]}]}'
    out = meter.feed(b"event: response.output_text.delta\ndata: " + odd + b"\n\n", 1.0)
    assert orjson.loads(out[0].split(b"data: ")[1]) == {"delta": "x", "logprobs": []}
    assert len(meter.result().logprob_chunks) == 1


def test_an_upstream_error_body_is_recorded_as_sent() -> None:
    meter = Responses().meter(_plan({"input": "hi"})[0], None)
    body = _text("resp_bad_model")
    assert meter.body(body, 404) == body
    failure = meter.result().failure
    assert failure is not None and (failure.status, failure.error_type) == (404, "NotFoundError")


@pytest.mark.parametrize(
    ("field", "value"),
    [("background", True), ("background", "yes"), ("previous_response_id", "resp_x")],
)
def test_stored_response_features_are_refused_without_the_models_store(
    field: str, value: Any
) -> None:
    payload = {"input": "hi", field: value}
    Responses().read_fields(payload)
    with pytest.raises(GatewayError) as refused:
        _place(payload, MeasurementPlan(stream=False))
    assert refused.value.status == 400 and refused.value.param == field
    assert "responses_store: true" in refused.value.message


@pytest.mark.parametrize(
    "payload",
    [{"stream": "maybe"}, {"top_logprobs": "x"}, {"include": "message.output_text.logprobs"}],
)
def test_values_vllm_refuses_are_a_400(payload: dict[str, Any]) -> None:
    with pytest.raises(GatewayError) as refused:
        Responses().read_fields({"input": "hi", **payload})
    assert refused.value.status == 400


def test_a_body_in_another_layout_is_parsed_and_restored() -> None:
    plan, _ = _plan({"input": "hi"})
    meter = Responses().meter(plan, None)
    entry = {"logprob": -0.5, "token": "a", "top_logprobs": []}
    body = {
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "output_text", "logprobs": [entry]}]}],
        "top_logprobs": 2,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    out = orjson.loads(meter.body(orjson.dumps(body), 200))
    assert out["output"][0]["content"][0]["logprobs"] is None and out["top_logprobs"] is None
    measured = meter.result()
    assert measured.finish_reason == "stop" and len(measured.logprob_chunks) == 1
    assert measured.usage is not None and measured.usage["prompt_tokens"] == 3


def test_an_echo_in_another_layout_is_restored_without_keeping_logprobs_twice() -> None:
    plan, _ = _plan({"input": "hi"})
    meter = Responses().meter(plan, None)
    body = _text("resp_logprobs").replace(b'"truncation":"disabled",', b"")
    out = orjson.loads(meter.body(body, 200))
    assert out["top_logprobs"] is None
    assert out["output"][0]["content"][0]["logprobs"] is None
    assert len(meter.result().logprob_chunks) == 1
