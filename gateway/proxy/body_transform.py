"""Meter a non-streaming response body and restore it to what the client asked for."""

from __future__ import annotations

import orjson

from gateway.metering.record import CallRecord
from gateway.proxy.choice_logprobs import record_upstream_error, take_logprobs
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError


def transform_body(body: bytes, status: int, record: CallRecord, plan: MeasurementPlan) -> bytes:
    """Record usage, engine metrics, finish reason and logprobs; strip what the gateway added."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise UpstreamProtocolError("backend sent a response that is not JSON") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError("backend sent a response that is not a JSON object")
    if status >= 400 or "error" in obj:
        record_upstream_error(record, status if status >= 400 else 500, obj.get("error", obj))
        return body
    fingerprint = obj.get("system_fingerprint")
    if isinstance(fingerprint, str):
        record.backend_fingerprint = fingerprint
    usage = obj.get("usage")
    record.usage = usage if isinstance(usage, dict) else None
    metrics = obj.get("metrics")
    record.engine_metrics = metrics if isinstance(metrics, dict) else None
    modified = False
    choices = obj.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if not isinstance(choice, dict):
            continue
        if record.finish_reason is None and choice.get("finish_reason") is not None:
            record.finish_reason = str(choice["finish_reason"])
        modified |= take_logprobs(choice, plan, record)
    return orjson.dumps(obj) if modified else body
