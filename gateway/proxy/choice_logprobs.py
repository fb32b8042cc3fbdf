"""Capture a choice's logprobs for the record, from raw bytes or (when trimming) parsed JSON."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.record import CallRecord
from gateway.proxy import logprob_bytes
from gateway.proxy.request_plan import MeasurementPlan
from plumbline.logprob_codec import CHAT


def capture_raw(
    record: CallRecord, fmt: str, index: int, obj: bytes, *, count: bool = True
) -> int | None:
    """Keep one choice's raw logprobs object; return the positions it covers, None if odd."""
    # `count=False` returns 0: counting a whole body's positions is a scan of it that the log
    # sink repeats anyway, off the hot path.
    if fmt == CHAT:
        items = logprob_bytes.chat_items(obj)
        if items is None:
            return None
        record.logprob_chunks.append((index, items))
        return logprob_bytes.positions(items) if count else 0
    record.logprob_chunks.append((index, obj))
    return 1


def _trimmed(logprobs: dict[str, Any], k: int) -> dict[str, Any]:
    content = logprobs.get("content") or []
    return {
        **logprobs,
        "content": [{**e, "top_logprobs": (e.get("top_logprobs") or [])[:k]} for e in content],
    }


def take_parsed(choice: dict[str, Any], plan: MeasurementPlan, record: CallRecord) -> bool:
    """Record a parsed choice's logprobs; return True if the choice was changed for the client."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return False
    if plan.capture_logprobs:
        index = choice.get("index", 0)
        if plan.fmt == CHAT:
            content = logprobs.get("content") or []
            if content:
                record.logprob_chunks.append((index, orjson.dumps(content)[1:-1]))
        else:
            record.logprob_chunks.append((index, orjson.dumps(logprobs)))
    if plan.strip_logprobs:
        choice["logprobs"] = None
        return True
    if plan.client_top_k is not None:
        choice["logprobs"] = _trimmed(logprobs, plan.client_top_k)
        return True
    return False


def record_upstream_error(record: CallRecord, status: int, error: Any) -> None:
    """Copy an OpenAI-shaped upstream error into the record."""
    if isinstance(error, dict):
        record.fail(status, str(error.get("type") or "Error"), str(error.get("message") or ""))
    else:
        record.fail(status, "Error", str(error))
