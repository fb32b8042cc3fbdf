"""Meter a non-streaming response body and restore it to what the client asked for.

The logprobs (most of a 200-token top-5 body) are sliced out as bytes, never parsed here; only
the rest of the body is parsed for usage, engine metrics and the finish reason.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.record import CallRecord
from gateway.proxy import logprob_bytes
from gateway.proxy.choice_logprobs import capture_raw, record_upstream_error, take_parsed
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError


def _parse(body: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise UpstreamProtocolError("backend sent a response that is not JSON") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError("backend sent a response that is not a JSON object")
    return obj


def _choices(obj: dict[str, Any]) -> list[dict[str, Any]]:
    choices = obj.get("choices")
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _describe(obj: dict[str, Any], record: CallRecord) -> None:
    fingerprint = obj.get("system_fingerprint")
    if isinstance(fingerprint, str):
        record.backend_fingerprint = fingerprint
    usage, metrics = obj.get("usage"), obj.get("metrics")
    record.usage = usage if isinstance(usage, dict) else None
    record.engine_metrics = metrics if isinstance(metrics, dict) else None
    for choice in _choices(obj):
        if choice.get("finish_reason") is not None:
            record.finish_reason = str(choice["finish_reason"])
            break


def _fast(body: bytes, record: CallRecord, plan: MeasurementPlan) -> bytes | None:
    found = logprob_bytes.spans(body)
    if found is None:
        return None
    client_body = logprob_bytes.without(body, found) if found else body
    obj = _parse(client_body)
    choices = _choices(obj)
    if found and len(found) != len(choices):
        return None
    if plan.capture_logprobs:
        for choice, span in zip(choices, found, strict=False):
            raw = logprob_bytes.value(body, span)
            index = choice.get("index", 0)
            if capture_raw(record, plan.fmt, index, raw, count=False) is None:
                record.logprob_chunks.clear()
                return None
    _describe(obj, record)
    return client_body if plan.strip_logprobs else body


def transform_body(body: bytes, status: int, record: CallRecord, plan: MeasurementPlan) -> bytes:
    """Record usage, engine metrics, finish reason and logprobs; strip what the gateway added."""
    if status < 400 and plan.client_top_k is None:
        out = _fast(body, record, plan)
        if out is not None:
            return out
    obj = _parse(body)
    if status >= 400 or "error" in obj:
        record_upstream_error(record, status if status >= 400 else 500, obj.get("error", obj))
        return body
    _describe(obj, record)
    modified = False
    for choice in _choices(obj):
        modified |= take_parsed(choice, plan, record)
    return orjson.dumps(obj) if modified else body
