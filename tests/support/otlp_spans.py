"""OTLP/HTTP trace exports built by hand, and W3C `traceparent` headers, for span tests."""

from __future__ import annotations

import secrets
import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def new_trace_id() -> str:
    """A random 16-byte trace id, lowercase hex."""
    return secrets.token_hex(16)


def new_span_id() -> str:
    """A random 8-byte span id, lowercase hex."""
    return secrets.token_hex(8)


def traceparent(trace_id: str, span_id: str, sampled: bool = True) -> str:
    """The W3C `traceparent` header naming `span_id` of `trace_id` as the parent."""
    return f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"


def _value(value: str | int | float | bool) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=value)


def export_request(
    name: str,
    trace_id: str,
    span_id: str,
    parent_id: str | None,
    attributes: dict[str, str | int | float | bool],
    service: str = "plumbline-tests",
) -> bytes:
    """One finished span, serialised as the body of an OTLP/HTTP POST to /v1/traces."""
    end_ns = time.time_ns()
    span = Span(
        trace_id=bytes.fromhex(trace_id),
        span_id=bytes.fromhex(span_id),
        parent_span_id=bytes.fromhex(parent_id) if parent_id else b"",
        name=name,
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=end_ns - 1_000_000,
        end_time_unix_nano=end_ns,
        attributes=[KeyValue(key=k, value=_value(v)) for k, v in attributes.items()],
    )
    resource = Resource(attributes=[KeyValue(key="service.name", value=_value(service))])
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(resource=resource, scope_spans=[ScopeSpans(spans=[span])])]
    )
    body: bytes = request.SerializeToString()
    return body
