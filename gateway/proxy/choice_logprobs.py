"""Capture the logprobs of a choice for the record and restore what the client asked for."""

from __future__ import annotations

from typing import Any

from gateway.metering.logprob_codec import CHAT
from gateway.metering.record import CallRecord
from gateway.proxy.request_plan import MeasurementPlan


def _trimmed(logprobs: dict[str, Any], k: int) -> dict[str, Any]:
    content = logprobs.get("content") or []
    return {
        **logprobs,
        "content": [{**e, "top_logprobs": (e.get("top_logprobs") or [])[:k]} for e in content],
    }


def take_logprobs(choice: dict[str, Any], plan: MeasurementPlan, record: CallRecord) -> bool:
    """Record a choice's logprobs; return True if the choice was changed for the client."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return False
    if plan.capture_logprobs:
        part = logprobs.get("content") if plan.fmt == CHAT else logprobs
        if part:
            record.logprob_chunks.append((choice.get("index", 0), part))
    if plan.strip_logprobs:
        choice["logprobs"] = None
        return True
    if plan.client_top_k is not None:
        choice["logprobs"] = _trimmed(logprobs, plan.client_top_k)
        return True
    return False


def count_tokens(choice: dict[str, Any], plan: MeasurementPlan) -> int:
    """Tokens a streamed choice chunk carries (exact with logprobs, else one per chunk)."""
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        if plan.fmt == CHAT:
            return len(logprobs.get("content") or [])
        return len(logprobs.get("tokens") or [])
    return 1


def record_upstream_error(record: CallRecord, status: int, error: Any) -> None:
    """Copy an OpenAI-shaped upstream error into the record."""
    if isinstance(error, dict):
        record.fail(status, str(error.get("type") or "Error"), str(error.get("message") or ""))
    else:
        record.fail(status, "Error", str(error))
