"""Read the recorded request parameters out of a client's JSON body, defensively."""

from __future__ import annotations

from typing import Any

from gateway.metering.record import CallRecord

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


def describe_request(record: CallRecord, payload: dict[str, Any]) -> None:
    """Copy model and sampling parameters into the record; odd types are recorded as unknown."""
    model = payload.get("model")
    record.model = model[:256] if isinstance(model, str) else None
    record.stream = payload.get("stream") is True
    record.n = _bounded_int(payload.get("n"), INT32) if "n" in payload else 1
    record.temperature = _number(payload.get("temperature"))
    record.top_p = _number(payload.get("top_p"))
    record.seed = _bounded_int(payload.get("seed"), INT64)
    limit = payload.get("max_completion_tokens")
    if limit is None:
        limit = payload.get("max_tokens")
    record.max_tokens = _bounded_int(limit, INT32)


def tokens_used(record: CallRecord) -> int:
    """Tokens a finished call consumed (the backend's usage, else the tokens counted)."""
    usage = record.usage or {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(prompt) is int and type(completion) is int:
        return max(0, prompt) + max(0, completion)
    return record.completion_tokens_seen
