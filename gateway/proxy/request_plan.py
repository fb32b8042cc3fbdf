"""What the gateway adds to a request upstream to measure it, and what it must strip again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.config import LogprobCapture
from gateway.metering.logprob_codec import CHAT, COMPLETION


@dataclass(frozen=True, slots=True)
class MeasurementPlan:
    """The changes made to one request, so the response can be restored for the client."""

    fmt: str
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


def _is_int(value: Any) -> bool:
    return type(value) is int


def _plan_chat_logprobs(payload: dict[str, Any], k: int) -> tuple[bool, int | None, int, bool]:
    wants, top = payload.get("logprobs"), payload.get("top_logprobs")
    if wants is None or wants is False:
        if top is not None:
            return False, None, 0, False  # invalid on its own: let the backend say so
        payload["logprobs"] = True
        payload["top_logprobs"] = k
        return True, None, k, True
    if wants is not True or not (top is None or _is_int(top)):
        return False, None, 0, False
    client_k = top or 0
    if client_k >= k:
        return False, None, client_k, True
    payload["top_logprobs"] = k
    # Chat lists put the sampled token first, so the first client_k entries are what the
    # client would have got: trimming commutes with vLLM's ordering.
    return False, client_k, k, True


def _plan_completion_logprobs(payload: dict[str, Any], k: int) -> tuple[bool, int, bool]:
    wants = payload.get("logprobs")
    if wants is None:
        payload["logprobs"] = k
        return True, k, True
    if _is_int(wants) and wants >= 0:
        # Completion lists are keyed by token, so a narrower list cannot be derived from a
        # wider one exactly: the client's own k is captured instead.
        return False, wants, True
    return False, 0, False


def _plan_usage(payload: dict[str, Any]) -> bool:
    if payload.get("stream") is not True:
        return False
    options = payload.get("stream_options")
    if options is None:
        payload["stream_options"] = {"include_usage": True}
        return True
    if not isinstance(options, dict) or options.get("include_usage") is True:
        return False
    # continuous_usage_stats only acts with include_usage, so it must stay off upstream.
    payload["stream_options"] = {**options, "include_usage": True, "continuous_usage_stats": False}
    return True


def plan_request(payload: dict[str, Any], fmt: str, capture: LogprobCapture) -> MeasurementPlan:
    """Add what measurement needs to `payload` (in place) and say how to undo it."""
    stream = payload.get("stream") is True
    strip_usage = _plan_usage(payload)
    upstream_k = capture.upstream_k
    if upstream_k is None:
        return MeasurementPlan(fmt, stream, strip_usage=strip_usage)
    if fmt == CHAT:
        strip, client_k, captured, on = _plan_chat_logprobs(payload, upstream_k)
        return MeasurementPlan(fmt, stream, strip, client_k, strip_usage, captured, on)
    assert fmt == COMPLETION
    strip, captured, on = _plan_completion_logprobs(payload, upstream_k)
    return MeasurementPlan(fmt, stream, strip, None, strip_usage, captured, on)
