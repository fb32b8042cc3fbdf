"""A call's trace context: decided on arrival, sent upstream, kept on the call's record."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from plumbline.otlp.sampler import TraceSampler
from plumbline.otlp.trace_context import (
    MAX_HEADER_CHARS,
    ParentContext,
    format_traceparent,
    new_span_id,
    new_trace_id,
    parse_traceparent,
    parse_tracestate,
)


@dataclass(frozen=True, slots=True)
class CallTrace:
    """The gateway span of one call (ids None when tracing is off) and what goes upstream."""

    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    sampled: bool = False
    tracestate: str | None = None
    upstream_headers: tuple[tuple[str, str], ...] = ()
    # The span this call's span links to (an eval question's, from X-Plumbline-Trace-Link).
    link: ParentContext | None = None


TRACE_LINK_HEADER = b"x-plumbline-trace-link"


def trace_link_values(raw: list[tuple[bytes, bytes]]) -> list[str]:
    """The X-Plumbline-Trace-Link header values, each bounded as traceparent is, as text."""
    return [v[:MAX_HEADER_CHARS].decode("latin-1") for n, v in raw if n == TRACE_LINK_HEADER]


def linked(trace: CallTrace, values: list[str]) -> CallTrace:
    """The trace with the link an (admin's) X-Plumbline-Trace-Link names.

    Read by traceparent's rules: a malformed value, or two values, are ignored as an invalid
    traceparent is (the call is served, its span has no link); with tracing off there is no
    span to link from.
    """
    if trace.span_id is None or len(values) != 1:
        return trace
    link = parse_traceparent(values[0])
    return trace if link is None else replace(trace, link=link)


def _client_headers(raw: list[tuple[bytes, bytes]]) -> tuple[list[str], list[str]]:
    """The client's `traceparent` and `tracestate` header values, in order, as text."""
    parents: list[str] = []
    states: list[str] = []
    for name, value in raw:
        if name == b"traceparent":
            parents.append(value[:MAX_HEADER_CHARS].decode("latin-1"))
        elif name == b"tracestate":
            states.append(value[:MAX_HEADER_CHARS].decode("latin-1"))
    return parents, states


def call_trace(sampler: TraceSampler | None, raw: list[tuple[bytes, bytes]]) -> CallTrace:
    """The call's trace context from its request headers (the ASGI scope's list)."""
    parents, states = _client_headers(raw)
    if sampler is None:
        return _passed_through(parents, states)
    # Two traceparent headers cannot be told apart: the spec treats that as none valid.
    parent = parse_traceparent(parents[0]) if len(parents) == 1 else None
    span_id = new_span_id()
    if parent is None:
        # A new trace, and the client's tracestate (if any) belonged to no valid parent.
        trace_id = new_trace_id()
        sampled = sampler.sampled(trace_id, None)
        headers = (("traceparent", format_traceparent(trace_id, span_id, sampled)),)
        return CallTrace(trace_id, span_id, None, sampled, None, headers)
    sampled = sampler.sampled(parent.trace_id, parent.sampled)
    tracestate = parse_tracestate(states)
    traceparent = ("traceparent", format_traceparent(parent.trace_id, span_id, sampled))
    sent = (traceparent,) if tracestate is None else (traceparent, ("tracestate", tracestate))
    return CallTrace(parent.trace_id, span_id, parent.span_id, sampled, tracestate, sent)


def _passed_through(parents: list[str], states: list[str]) -> CallTrace:
    """Tracing off: the client's own headers go upstream as they came, nothing is recorded."""
    headers: list[tuple[str, str]] = []
    if len(parents) == 1 and _forwardable(parents[0]):
        headers.append(("traceparent", parents[0]))
        tracestate = ",".join(states)
        if states and _forwardable(tracestate) and len(tracestate) <= MAX_HEADER_CHARS:
            headers.append(("tracestate", tracestate))
    return CallTrace(upstream_headers=tuple(headers))


def _forwardable(value: str) -> bool:
    """Whether a header value is visible ASCII (or blanks): never a control character."""
    return re.fullmatch(r"[\x20-\x7e\t]*", value) is not None
