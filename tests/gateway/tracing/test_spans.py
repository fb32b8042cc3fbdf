"""Span building: a recorded call becomes one GenAI span whose figures are its row's."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from gateway.config import RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.spans import call_span, end_user_hash, operation_name
from tests.support.otlp_receiver import attributes
from tests.support.records import make_record

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
PARENT = "b7ad6b7169203331"


def _traced(**fields: Any) -> CallRecord:
    context: dict[str, Any] = dict(
        trace_id=TRACE, span_id=SPAN, parent_span_id=PARENT, trace_sampled=True
    )
    return make_record(**(context | fields))


def _span(record: CallRecord, latest: bool = False) -> tuple[Span, dict[str, Any], dict[str, Any]]:
    # The writer's redaction, as the recorder applies it to the row the span is built from.
    row, _ = call_row(record, RedactionPolicy(RedactionConfig(enabled=True)))
    span = call_span(record, row, latest=latest)
    return span, attributes(span.attributes), row


def test_a_chat_call_is_a_client_span_in_its_trace_with_the_rows_figures() -> None:
    record = _traced(temperature=0.7, top_p=0.9, seed=5, max_tokens=64, finish_reason="stop")
    span, attrs, row = _span(record, latest=True)
    assert (span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex()) == (
        TRACE,
        SPAN,
        PARENT,
    )
    assert span.kind == Span.SPAN_KIND_CLIENT and span.name == "chat tiny"
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.provider.name"] == "vllm" and "gen_ai.system" not in attrs
    assert attrs["gen_ai.request.model"] == "tiny"
    assert (attrs["gen_ai.request.temperature"], attrs["gen_ai.request.top_p"]) == (0.7, 0.9)
    assert (attrs["gen_ai.request.seed"], attrs["gen_ai.request.max_tokens"]) == (5, 64)
    assert attrs["gen_ai.response.finish_reasons"] == ["stop"]
    assert attrs["gen_ai.usage.input_tokens"] == row["prompt_tokens"] == 30
    assert attrs["gen_ai.usage.output_tokens"] == row["completion_tokens"] == 20
    for name, column in {
        "plumbline.ttft_ms": "ttft_ms",
        "plumbline.decode_ms": "decode_ms",
        "plumbline.itl.p50_ms": "itl_p50_ms",
        "plumbline.itl.p95_ms": "itl_p95_ms",
        "plumbline.itl.max_ms": "itl_max_ms",
        "plumbline.engine.queue_ms": "engine_queue_ms",
        "plumbline.engine.prefill_ms": "engine_prefill_ms",
        "plumbline.engine.decode_ms": "engine_decode_ms",
        "plumbline.gateway.overhead_ms": "overhead_ms",
        "plumbline.cost.input": "input_cost",
        "plumbline.cost.output": "output_cost",
        "plumbline.logprob.mean": "logprob_mean",
        "plumbline.logprob.min_margin": "logprob_min_margin",
        "plumbline.logprob.near_ties": "near_ties",
    }.items():
        assert row[column] is not None and attrs[name] == row[column], name
    assert attrs["plumbline.call.id"] == record.id
    assert attrs["plumbline.request_id"] == record.request_id
    assert (attrs["plumbline.team"], attrs["plumbline.feature"]) == ("team-a", "chat")
    assert (attrs["server.address"], attrs["server.port"]) == ("127.0.0.1", 1)
    assert span.status.code == Status.STATUS_CODE_UNSET


def test_times_are_the_wall_clock_of_arrival_plus_the_measured_offsets() -> None:
    record = _traced()
    span, _, row = _span(record)
    start = record.created_at.timestamp()
    assert span.start_time_unix_nano == pytest.approx(start * 1e9, abs=2000)
    assert span.end_time_unix_nano - span.start_time_unix_nano == pytest.approx(
        row["e2e_ms"] * 1e6, abs=2000
    )
    (first,) = [e for e in span.events if e.name == "gen_ai.first_token"]
    assert first.time_unix_nano - span.start_time_unix_nano == pytest.approx(
        row["ttft_ms"] * 1e6, abs=2000
    )


def test_without_the_opt_in_the_v1_36_names_are_emitted() -> None:
    _, attrs, _ = _span(_traced(usage={"prompt_tokens": 3, "completion_tokens": 2}))
    assert attrs["gen_ai.system"] == "vllm" and "gen_ai.provider.name" not in attrs
    assert "gen_ai.usage.cache_read.input_tokens" not in attrs


def test_cached_tokens_are_reported_under_the_latest_conventions() -> None:
    usage = {
        "prompt_tokens": 30,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 16},
    }
    _, attrs, _ = _span(_traced(usage=usage), latest=True)
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 16
    assert attrs["plumbline.usage.cached_tokens"] == 16


@pytest.mark.parametrize(
    ("endpoint", "operation"),
    [
        ("/v1/chat/completions", "chat"),
        ("/v1/completions", "text_completion"),
        ("/v1/responses", "chat"),
        ("/v1/messages", "chat"),
        ("/v1/embeddings", "embeddings"),
        ("/v1/rerank", "rerank"),
    ],
)
def test_each_endpoint_names_its_operation(endpoint: str, operation: str) -> None:
    assert operation_name(endpoint) == operation
    fields: dict[str, Any] = {"endpoint": endpoint}
    if operation == "embeddings":
        fields |= dict(stream=False, token_chunk_times=[], logprob_chunks=[], items=3)
    span, attrs, _ = _span(_traced(**fields))
    assert span.name == f"{operation} tiny" and attrs["gen_ai.operation.name"] == operation
    if operation == "embeddings":
        assert attrs["plumbline.items"] == 3
        assert not [e for e in span.events if e.name == "gen_ai.first_token"]


def test_a_failed_call_has_error_status_and_an_exception_event_with_the_stored_message() -> None:
    record = _traced(
        status_code=502,
        error_type="backend_error",
        error_message="upstream said no to alice@example.com",
        token_chunk_times=[],
        logprob_chunks=[],
    )
    span, attrs, row = _span(record)
    assert span.status.code == Status.STATUS_CODE_ERROR
    assert "alice@example.com" not in row["error_message"]
    assert span.status.message == row["error_message"]
    assert attrs["error.type"] == "backend_error"
    (event,) = [e for e in span.events if e.name == "exception"]
    assert attributes(event.attributes) == {
        "exception.type": "backend_error",
        "exception.message": row["error_message"],
        "http.response.status_code": 502,
    }
    assert event.time_unix_nano == span.end_time_unix_nano


def test_the_end_user_is_shown_only_as_a_digest_and_only_for_teams_that_store_bodies() -> None:
    _, hidden, _ = _span(_traced(end_user="user-17"))
    assert "plumbline.end_user.hash" not in hidden
    record = _traced(end_user="user-17", store_body=True)
    _, shown, _ = _span(record)
    assert shown["plumbline.end_user.hash"] == end_user_hash(record)
    assert "user-17" not in str(shown)


def test_a_record_without_trace_context_has_no_span() -> None:
    record = make_record()
    row, _ = call_row(record)
    with pytest.raises(ValueError, match="no trace context"):
        call_span(record, row)


def test_a_call_with_no_finish_time_ends_where_it_starts() -> None:
    record = _traced(t_done=None, token_chunk_times=[])
    span, _, _ = _span(record)
    assert span.end_time_unix_nano == span.start_time_unix_nano


def test_the_trace_context_crosses_to_the_recorder_with_the_record() -> None:
    record = _traced(tracestate="vendor=abc")
    assert pickle.loads(pickle.dumps(record)) == record


@pytest.mark.parametrize("latest", [False, True])
def test_the_response_id_and_model_are_the_rows_under_either_conventions(latest: bool) -> None:
    record = _traced(response_id="chatcmpl-81d450c7733be895", response_model="tiny-lora")
    _, attrs, row = _span(record, latest=latest)
    assert attrs["gen_ai.response.id"] == row["response_id"] == "chatcmpl-81d450c7733be895"
    assert attrs["gen_ai.response.model"] == row["response_model"] == "tiny-lora"
    assert attrs["gen_ai.request.model"] == "tiny"


def test_a_response_without_an_identity_has_no_such_attributes() -> None:
    _, attrs, row = _span(_traced())
    assert row["response_id"] is None and row["response_model"] is None
    assert "gen_ai.response.id" not in attrs and "gen_ai.response.model" not in attrs


def test_the_response_identity_crosses_to_the_recorder_with_the_record() -> None:
    record = _traced(response_id="resp_1", response_model="tiny")
    crossed = pickle.loads(pickle.dumps(record))
    assert (crossed.response_id, crossed.response_model) == ("resp_1", "tiny")
