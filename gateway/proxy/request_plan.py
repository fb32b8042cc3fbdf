"""What the gateway adds to a request upstream to measure it, and what it must strip again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.config import LogprobCapture
from gateway.proxy.lax_values import RequestFields

if TYPE_CHECKING:
    from gateway.proxy.call_kinds.base import CallKind


@dataclass(frozen=True, slots=True)
class MeasurementPlan:
    """The changes made to one request, so the response can be restored for the client."""

    stream: bool
    strip_logprobs: bool = False
    client_top_k: int | None = None
    strip_usage: bool = False
    captured_k: int = 0
    capture_logprobs: bool = False

    @property
    def changed(self) -> bool:
        """True when the upstream request differs from the client's."""
        return self.strip_logprobs or self.client_top_k is not None or self.strip_usage


@dataclass(frozen=True, slots=True)
class LogprobPlan:
    """What a call kind asked upstream for to capture logprobs, and what the client gets back."""

    strip: bool = False
    client_top_k: int | None = None
    captured_k: int = 0
    capture: bool = False


def _plan_usage(payload: dict[str, Any], fields: RequestFields) -> bool:
    if not fields.stream:
        return False
    options = payload.get("stream_options")
    if options is None:
        payload["stream_options"] = {"include_usage": True}
        return True
    if not isinstance(options, dict) or fields.include_usage:
        return False
    # continuous_usage_stats only acts with include_usage, so it must stay off upstream.
    payload["stream_options"] = {**options, "include_usage": True, "continuous_usage_stats": False}
    return True


def plan_request(
    payload: dict[str, Any],
    kind: CallKind,
    capture: LogprobCapture,
    fields: RequestFields | None = None,
) -> MeasurementPlan:
    """Add what measurement needs to `payload` (in place) and say how to undo it.

    `fields` are the payload's acted-on fields as vLLM reads them (read here when not given).
    """
    if fields is None:
        fields = kind.read_fields(payload)
    stream = fields.stream
    strip_usage = kind.asks_stream_usage and _plan_usage(payload, fields)
    upstream_k = capture.upstream_k
    if upstream_k is None:
        return MeasurementPlan(stream, strip_usage=strip_usage)
    logprobs = kind.plan_logprobs(payload, fields, upstream_k)
    return MeasurementPlan(
        stream,
        logprobs.strip,
        logprobs.client_top_k,
        strip_usage,
        logprobs.captured_k,
        logprobs.capture,
    )
