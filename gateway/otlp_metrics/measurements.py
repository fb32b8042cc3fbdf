"""What one recorded call adds to the GenAI histograms, from its record and its `calls` row.

Only the conventions' inference operations are measured (chat, text completion, embeddings);
other routes are in Prometheus' `/metrics` only. Failed calls count in the operation duration
with `error.type`; time to first token and time per output token are of successful calls only.
"""

from __future__ import annotations

from typing import Any

from gateway.metering.record import CallRecord
from gateway.metrics import ERROR_TYPES
from gateway.otlp_metrics.instruments import (
    OPERATION_DURATION,
    TIME_PER_OUTPUT_TOKEN,
    TIME_TO_FIRST_TOKEN,
    TOKEN_USAGE,
    Instrument,
)
from gateway.tracing.spans import OPERATIONS, PROVIDER, server_attributes

# An attribute set as a hashable key: (name, value) pairs in name order, None values left out.
Attributes = tuple[tuple[str, Any], ...]
Measurement = tuple[Instrument, Attributes, float]
# The conventions' fallback for an error type the gateway does not name.
OTHER_ERROR = "_OTHER"


def attribute_set(attributes: dict[str, Any]) -> Attributes:
    """The key of an attribute dict."""
    return tuple(sorted((k, v) for k, v in attributes.items() if v is not None))


def error_type(record: CallRecord) -> str:
    """A low-cardinality `error.type`: a known error name, else the HTTP status."""
    if record.error_type in ERROR_TYPES:
        return str(record.error_type)
    if record.status_code >= 400:
        return str(record.status_code)
    return OTHER_ERROR


def _failed(record: CallRecord) -> bool:
    return record.status_code >= 400 or record.error_type is not None or record.cancelled


def _common(
    record: CallRecord, row: dict[str, Any], operation: str, latest: bool
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        ("gen_ai.provider.name" if latest else "gen_ai.system"): PROVIDER,
        # Team names are made by admins: a bounded set, as in Prometheus' `team` label.
        "plumbline.team": record.team_name,
    }
    # Only a call that reached a backend names a configured model: any other model name is
    # the client's own and would let one client fill the attribute-set limit.
    if record.backend is not None:
        attributes["gen_ai.request.model"] = record.model
        attributes["gen_ai.response.model"] = row.get("response_model")
        attributes |= server_attributes(record.backend)
    return attributes


def call_measurements(
    record: CallRecord, row: dict[str, Any], *, latest: bool = False
) -> list[Measurement]:
    """The histogram measurements of one recorded call (none for other routes)."""
    operation = OPERATIONS.get(record.endpoint)
    if operation is None:
        return []
    common = _common(record, row, operation, latest)
    failed = _failed(record)
    measured: list[Measurement] = []
    if row["e2e_ms"] is not None:
        duration = common | ({"error.type": error_type(record)} if failed else {})
        measured.append((OPERATION_DURATION, attribute_set(duration), row["e2e_ms"] / 1000))
    tokens = [("input", row["prompt_tokens"])]
    if operation != "embeddings":
        tokens.append(("output", row["completion_tokens"]))
    for token_type, count in tokens:
        if count is not None:
            attributes = attribute_set(common | {"gen_ai.token.type": token_type})
            measured.append((TOKEN_USAGE, attributes, float(count)))
    if failed or row["ttft_ms"] is None:
        return measured
    key = attribute_set(common)
    measured.append((TIME_TO_FIRST_TOKEN, key, row["ttft_ms"] / 1000))
    output = row["completion_tokens"]
    if row["e2e_ms"] is not None and output is not None and output > 1:
        # The conventions: the request's duration less the first token's, over the tokens after it.
        after_first = max(row["e2e_ms"] - row["ttft_ms"], 0.0) / 1000
        measured.append((TIME_PER_OUTPUT_TOKEN, key, after_first / (output - 1)))
    return measured
