"""What the gateway adds to a request upstream to measure it, and what it must strip again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.config import LogprobCapture
from gateway.proxy.lax_values import RequestFields, read_request_fields
from plumbline.logprob_codec import CHAT, COMPLETION


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


def _pin_echoed_prompt_logprobs(
    payload: dict[str, Any], fields: RequestFields, client_k: int
) -> bool:
    """Keep an echoed chat prompt's logprobs as the client's request would have had them.

    vLLM computes `prompt_logprobs` for an echoed chat prompt with `top_logprobs` alternatives
    unless `prompt_logprobs` is set, so raising `top_logprobs` would widen them in the body.
    Returns False when the request must be left alone instead.
    """
    if not fields.echo or fields.prompt_logprobs is not None or fields.stream:
        # A stream carries no prompt logprobs, and refuses an explicit positive value.
        return True
    if client_k > 0 and payload.get("stream"):
        # `"stream": "no"` is no stream, yet truthy to vLLM's raw check, which would then
        # refuse a positive prompt_logprobs.
        return False
    payload["prompt_logprobs"] = client_k
    return True


def _plan_chat_logprobs(
    payload: dict[str, Any], fields: RequestFields, k: int
) -> tuple[bool, int | None, int, bool]:
    if not fields.logprobs:
        if payload.get("top_logprobs") is not None:
            return False, None, 0, False  # invalid on its own: let the backend say so
        _pin_echoed_prompt_logprobs(payload, fields, 0)  # 0 is never refused
        payload["logprobs"] = True
        payload["top_logprobs"] = k
        return True, None, k, True
    client_k = fields.top_logprobs
    if client_k < 0:
        return False, None, 0, False  # -1 asks for the whole vocabulary: vLLM decides
    if client_k >= k:
        return False, None, client_k, True
    if not _pin_echoed_prompt_logprobs(payload, fields, client_k):
        return False, None, client_k, True
    payload["top_logprobs"] = k
    # Chat lists put the sampled token first, so the first client_k entries are what the
    # client would have got: trimming commutes with vLLM's ordering (up to exact ties).
    return False, client_k, k, True


def _plan_completion_logprobs(
    payload: dict[str, Any], fields: RequestFields, k: int
) -> tuple[bool, int, bool]:
    wants = fields.logprobs
    if wants is None:
        if fields.echo or payload.get("echo"):
            # (A raw `"echo": "no"` still counts for vLLM's beam-search check.)
            # vLLM would then add prompt logprobs too (costly, and a visible `prompt_logprobs`
            # list), and no request field can ask for none of them: capture nothing instead.
            return False, 0, False
        payload["logprobs"] = k
        return True, k, True
    if wants >= 0:
        # Completion lists are keyed by token, so a narrower list cannot be derived from a
        # wider one exactly: the client's own k is captured instead.
        return False, int(wants), True
    return False, 0, False


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
    fmt: str,
    capture: LogprobCapture,
    fields: RequestFields | None = None,
) -> MeasurementPlan:
    """Add what measurement needs to `payload` (in place) and say how to undo it.

    `fields` are the payload's acted-on fields as vLLM reads them (read here when not given).
    """
    if fields is None:
        fields = read_request_fields(payload, fmt)
    stream = fields.stream
    strip_usage = _plan_usage(payload, fields)
    upstream_k = capture.upstream_k
    if upstream_k is None:
        return MeasurementPlan(fmt, stream, strip_usage=strip_usage)
    if fmt == CHAT:
        strip, client_k, captured, on = _plan_chat_logprobs(payload, fields, upstream_k)
        return MeasurementPlan(fmt, stream, strip, client_k, strip_usage, captured, on)
    assert fmt == COMPLETION
    strip, captured, on = _plan_completion_logprobs(payload, fields, upstream_k)
    return MeasurementPlan(fmt, stream, strip, None, strip_usage, captured, on)
