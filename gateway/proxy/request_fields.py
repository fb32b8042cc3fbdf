"""Read the recorded request parameters out of a client's JSON body, defensively."""

from __future__ import annotations

from typing import Any

from gateway.metering.record import CallRecord
from gateway.proxy.lax_values import RequestFields, read_request_fields

INT32 = 2**31
INT64 = 2**63


def _bounded_int(value: Any, bound: int) -> int | None:
    return value if type(value) is int and -bound <= value < bound else None


def _number(value: Any) -> float | None:
    if type(value) in (int, float) and abs(value) < 1e300:
        return float(value)
    return None


def source_of(feature: str | None) -> str:
    """Where a call came from, by the feature tag its client set."""
    if feature and feature.startswith("eval:"):
        return "eval"
    if feature and feature.startswith("resample:"):
        return "live_sample"
    return "product"


def describe_request(record: CallRecord, payload: dict[str, Any], fmt: str) -> RequestFields:
    """Copy model and sampling parameters into the record, reading them as vLLM will.

    The model is recorded first, so a call refused for a field vLLM cannot read still says
    which model it named.
    """
    model = payload.get("model")
    record.model = model[:256] if isinstance(model, str) else None
    record.temperature = _number(payload.get("temperature"))
    record.top_p = _number(payload.get("top_p"))
    record.seed = _bounded_int(payload.get("seed"), INT64)
    fields = read_request_fields(payload, fmt)
    record.stream = fields.stream
    record.n = _bounded_int(fields.n, INT32)
    record.max_tokens = _bounded_int(fields.max_tokens, INT32)
    return fields


def tokens_used(record: CallRecord) -> int:
    """Tokens a finished call consumed (the backend's usage, else the tokens counted)."""
    usage = record.usage or {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(prompt) is int and type(completion) is int:
        return max(0, prompt) + max(0, completion)
    return record.completion_tokens_seen
