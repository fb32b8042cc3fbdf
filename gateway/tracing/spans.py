"""One OTLP span per recorded call, from the record and the `calls` row built from it.

The span follows the OpenTelemetry GenAI semantic conventions (`gen_ai.*`, still experimental):
by default the v1.36.0 names that instrumentations are told to keep emitting, and with
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` the pinned latest version. Plumbline's
own measurements are under `plumbline.*`. Figures come from the row, so a span and the call's
stored row always agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from gateway.metering.record import CallRecord
from gateway.tracing.bounded_json import bounded_json
from gateway.tracing.input_messages import input_messages
from gateway.tracing.output_messages import output_messages
from plumbline.otlp.attributes import key_values

# The GenAI conventions version emitted with `gen_ai_latest_experimental`.
SEMCONV_LATEST = "1.41.0"
# The version an instrumentation emits without the opt-in (the conventions' transition plan).
SEMCONV_DEFAULT = "1.36.0"
SCHEMA_URL = "https://opentelemetry.io/schemas/{}"
PROVIDER = "vllm"
# Collectors cap attribute sizes; a body or messages attribute beyond this is cut (its stored
# copy is whole).
MAX_BODY_CHARS = 16 * 1024
# Messages are built (in Python, on the export thread) only from stored bodies up to this size:
# at 1 MiB a message of 38,000 parts or a stream of 18,000 chunks takes 0.15-0.2 s, crowding
# out other teams' spans. Larger bodies go as `plumbline.*.body`, cut to MAX_BODY_CHARS.
MAX_STRUCTURED_BODY_CHARS = 256 * 1024
OPERATIONS = {
    "/v1/chat/completions": "chat",
    "/v1/responses": "chat",
    "/v1/messages": "chat",
    "/v1/completions": "text_completion",
    "/v1/embeddings": "embeddings",
}
# `plumbline.*` attribute: the `calls` row column it carries.
ROW_ATTRIBUTES = {
    "plumbline.call.id": "id",
    "plumbline.request_id": "request_id",
    "plumbline.feature": "feature",
    "plumbline.endpoint": "endpoint",
    "plumbline.source": "source",
    "plumbline.ttft_ms": "ttft_ms",
    "plumbline.decode_ms": "decode_ms",
    "plumbline.e2e_ms": "e2e_ms",
    "plumbline.itl.mean_ms": "itl_mean_ms",
    "plumbline.itl.p50_ms": "itl_p50_ms",
    "plumbline.itl.p95_ms": "itl_p95_ms",
    "plumbline.itl.max_ms": "itl_max_ms",
    "plumbline.engine.queue_ms": "engine_queue_ms",
    "plumbline.engine.prefill_ms": "engine_prefill_ms",
    "plumbline.engine.decode_ms": "engine_decode_ms",
    "plumbline.gateway.overhead_ms": "overhead_ms",
    "plumbline.cost.input": "input_cost",
    "plumbline.cost.output": "output_cost",
    "plumbline.usage.cached_tokens": "cached_tokens",
    "plumbline.usage.source": "usage_source",
    "plumbline.items": "items",
    "plumbline.logprob.mean": "logprob_mean",
    "plumbline.logprob.min_margin": "logprob_min_margin",
    "plumbline.logprob.near_ties": "near_ties",
    "plumbline.cancelled": "cancelled",
}


def operation_name(endpoint: str) -> str:
    """The `gen_ai.operation.name` of an endpoint; other routes are named by their last part."""
    return OPERATIONS.get(endpoint) or endpoint.rstrip("/").rsplit("/", 1)[-1] or "call"


def _nanos(moment: datetime, offset_ms: float | None = None) -> int:
    seconds = moment.timestamp() + (offset_ms or 0.0) / 1000
    return int(seconds * 1e9)


def server_attributes(backend: str | None) -> dict[str, Any]:
    """`server.address` and `server.port` of a backend URL (none for litellm names)."""
    if not backend:
        return {}
    parts = urlsplit(backend)
    try:
        port = parts.port
    except ValueError:
        port = None
    return {"server.address": parts.hostname, "server.port": port}


def end_user_hash(record: CallRecord) -> str | None:
    """The end user as a span may show it: a digest, only for teams that store bodies."""
    if record.end_user is None or not record.store_body:
        return None
    digest = hashlib.sha256(f"{record.team_id}:{record.end_user}".encode())
    return digest.hexdigest()[:32]


def gen_ai_attributes(record: CallRecord, row: dict[str, Any], latest: bool) -> dict[str, Any]:
    """The `gen_ai.*` attributes, by the version `latest` selects."""
    finish = [record.finish_reason] if record.finish_reason else None
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation_name(record.endpoint),
        ("gen_ai.provider.name" if latest else "gen_ai.system"): PROVIDER,
        "gen_ai.request.model": record.model,
        "gen_ai.request.temperature": record.temperature,
        "gen_ai.request.top_p": record.top_p,
        "gen_ai.request.max_tokens": record.max_tokens,
        "gen_ai.request.seed": record.seed,
        "gen_ai.request.choice.count": record.n if record.n not in (None, 1) else None,
        "gen_ai.response.finish_reasons": finish,
        # The same names in v1.36.0 and the latest: the backend's answer id and model.
        "gen_ai.response.id": row["response_id"],
        "gen_ai.response.model": row["response_model"],
        "gen_ai.usage.input_tokens": row["prompt_tokens"],
        "gen_ai.usage.output_tokens": row["completion_tokens"],
    }
    if latest:
        attributes["gen_ai.usage.cache_read.input_tokens"] = row["cached_tokens"]
    return attributes


def content_attributes(
    record: CallRecord,
    bodies: tuple[str | None, str | None],
    latest: bool,
    redact: Callable[[str], str] = str,
) -> dict[str, Any]:
    """Prompt and completion, only for teams that store bodies, from the stored (redacted) copies.

    The latest conventions carry them as `gen_ai.system_instructions`, `gen_ai.input.messages`
    and `gen_ai.output.messages` (JSON strings); v1.36.0 has no span attribute for them, so
    there, and for a body with no such structure, the stored body is `plumbline.*.body`.
    """
    request, response = bodies if record.store_body else (None, None)
    system = inputs = outputs = None
    if latest and request and len(request) <= MAX_STRUCTURED_BODY_CHARS:
        system, inputs = input_messages(record.endpoint, request)
    if latest and response and len(response) <= MAX_STRUCTURED_BODY_CHARS:
        outputs = output_messages(record.endpoint, response, record.stream, redact)
    structured_request = system is not None or inputs is not None
    return {
        "gen_ai.system_instructions": bounded_json(system, MAX_BODY_CHARS) if system else None,
        "gen_ai.input.messages": bounded_json(inputs, MAX_BODY_CHARS) if inputs else None,
        "gen_ai.output.messages": bounded_json(outputs, MAX_BODY_CHARS) if outputs else None,
        "plumbline.request.body": (
            request[:MAX_BODY_CHARS] if request and not structured_request else None
        ),
        "plumbline.response.body": (
            response[:MAX_BODY_CHARS] if response and outputs is None else None
        ),
    }


def _is_error(record: CallRecord) -> bool:
    return record.status_code >= 400 or record.error_type is not None


# OTLP Link.flags: the linked context's W3C flags, and that it is remote (another process's).
LINK_IS_REMOTE = 0x100 | 0x200


def call_links(record: CallRecord) -> list[Span.Link]:
    """The span's link to the eval question span its call was sent for, if any."""
    link = record.trace_link
    if link is None:
        return []
    flags = (1 if link.sampled else 0) | LINK_IS_REMOTE
    return [
        Span.Link(
            trace_id=bytes.fromhex(link.trace_id),
            span_id=bytes.fromhex(link.span_id),
            flags=flags,
        )
    ]


def call_span(
    record: CallRecord,
    row: dict[str, Any],
    *,
    latest: bool = False,
    bodies: tuple[str | None, str | None] = (None, None),
    redact: Callable[[str], str] = str,
) -> Span:
    """The gateway's span of a call whose record carries a trace context.

    `bodies`: the request and response as stored (redacted), for teams that store bodies;
    `redact`: the writer's redaction, for text assembled from a stream's events.
    """
    if record.trace_id is None or record.span_id is None:
        raise ValueError(f"call {record.id} has no trace context")
    attributes = gen_ai_attributes(record, row, latest)
    attributes |= server_attributes(record.backend)
    attributes |= {name: row[column] for name, column in ROW_ATTRIBUTES.items()}
    attributes["plumbline.team"] = record.team_name
    attributes["plumbline.end_user.hash"] = end_user_hash(record)
    attributes["http.response.status_code"] = record.status_code
    attributes |= content_attributes(record, bodies, latest, redact)
    events = []
    if row["ttft_ms"] is not None:
        events.append(
            Span.Event(
                name="gen_ai.first_token",
                time_unix_nano=_nanos(record.created_at, row["ttft_ms"]),
                attributes=key_values({"plumbline.ttft_ms": row["ttft_ms"]}),
            )
        )
    end = _nanos(record.created_at, row["e2e_ms"])
    status = Status()
    if _is_error(record):
        error_type = record.error_type or str(record.status_code)
        attributes["error.type"] = error_type
        # The stored (redacted) message, never the raw one.
        message = row["error_message"] or ""
        status = Status(code=Status.STATUS_CODE_ERROR, message=message)
        event = {"exception.type": error_type, "exception.message": message or None}
        event["http.response.status_code"] = record.status_code
        events.append(
            Span.Event(name="exception", time_unix_nano=end, attributes=key_values(event))
        )
    model = record.model or "unknown"
    return Span(
        trace_id=bytes.fromhex(record.trace_id),
        span_id=bytes.fromhex(record.span_id),
        parent_span_id=bytes.fromhex(record.parent_span_id) if record.parent_span_id else b"",
        trace_state=record.tracestate or "",
        name=f"{attributes['gen_ai.operation.name']} {model}",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=_nanos(record.created_at),
        end_time_unix_nano=max(end, _nanos(record.created_at)),
        attributes=key_values(attributes),
        events=events,
        links=call_links(record),
        status=status,
    )
