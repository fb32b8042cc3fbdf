"""A call's trace context from its raw request headers, with tracing on and off."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime

from gateway.metering.record import CallRecord
from gateway.tracing.call_trace import call_trace
from plumbline.otlp.sampler import TraceSampler

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE}-00f067aa0ba902b7-01".encode()


def test_a_client_parent_makes_the_gateway_span_its_child() -> None:
    trace = call_trace(TraceSampler(), [(b"traceparent", PARENT), (b"tracestate", b"a=1")])
    assert (trace.trace_id, trace.parent_span_id, trace.sampled) == (
        TRACE,
        "00f067aa0ba902b7",
        True,
    )
    assert trace.span_id is not None and trace.span_id != trace.parent_span_id
    assert dict(trace.upstream_headers) == {
        "traceparent": f"00-{TRACE}-{trace.span_id}-01",
        "tracestate": "a=1",
    }


def test_the_sampler_decides_a_new_trace() -> None:
    trace = call_trace(TraceSampler("always_off"), [])
    assert trace.trace_id is not None and trace.parent_span_id is None
    assert trace.sampled is False
    assert dict(trace.upstream_headers)["traceparent"].endswith("-00")


def test_off_passes_the_headers_through_and_decides_nothing() -> None:
    headers = [(b"traceparent", b"garbage"), (b"tracestate", b"X=1"), (b"tracestate", b"y=2")]
    trace = call_trace(None, headers)
    assert (trace.trace_id, trace.span_id, trace.sampled, trace.tracestate) == (
        None,
        None,
        False,
        None,
    )
    assert trace.upstream_headers == (("traceparent", "garbage"), ("tracestate", "X=1,y=2"))
    assert call_trace(None, [(b"tracestate", b"a=1")]).upstream_headers == ()


def test_the_record_keeps_the_trace_through_pickling() -> None:
    record = CallRecord(
        id="c",
        created_at=datetime.now(UTC),
        request_id="r",
        endpoint="/v1/chat/completions",
        trace_id=TRACE,
        span_id="1" * 16,
        parent_span_id="2" * 16,
        trace_sampled=True,
        tracestate="a=1",
    )
    copy = pickle.loads(pickle.dumps(record))
    assert copy == record
