"""The chat completions adapter (`/v1/chat/completions`): its fields, plan, meter and restoring."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy import logprob_bytes
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.choices_meter import ChoicesMeter
from gateway.proxy.lax_values import RequestFields, read_chat_fields
from gateway.proxy.litellm_params import CHAT_FIELDS, check_litellm_params
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from plumbline.logprob_codec import CHAT


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


def _trimmed(logprobs: dict[str, Any], k: int) -> dict[str, Any]:
    content = logprobs.get("content") or []
    return {
        **logprobs,
        "content": [{**e, "top_logprobs": (e.get("top_logprobs") or [])[:k]} for e in content],
    }


class ChatMeter(ChoicesMeter):
    """Keeps the items of each choice's `content` list; a role-only delta is not a token."""

    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        items = logprob_bytes.chat_items(raw)
        if items is None:
            return None
        self.logprob_chunks.append((index, items))
        # `count=False` returns 0: counting a whole body's positions is a scan of it that the
        # log sink repeats anyway, off the hot path.
        return logprob_bytes.positions(items) if count else 0

    def _capture_span(self, index: int, data: bytes, span: tuple[int, int]) -> int | None:
        # Once per streamed token: the items are cut from the chunk in one copy, not two.
        items = logprob_bytes.span_chat_items(data, span)
        if items is None:
            return None
        self.logprob_chunks.append((index, items))
        return logprob_bytes.positions(items)

    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            return False
        plan = self.plan
        if plan.capture_logprobs:
            content = logprobs.get("content") or []
            if content:
                self.logprob_chunks.append((choice.get("index", 0), orjson.dumps(content)[1:-1]))
        if plan.strip_logprobs:
            choice["logprobs"] = None
            return True
        if plan.client_top_k is not None:
            choice["logprobs"] = _trimmed(logprobs, plan.client_top_k)
            return True
        return False

    def _is_token(self, choice: dict[str, Any]) -> bool:
        delta = choice.get("delta")
        return not (isinstance(delta, dict) and "role" in delta)


class ChatCompletions(CallKind):
    """OpenAI chat completions, as vLLM serves them."""

    fmt = CHAT
    path = "/v1/chat/completions"

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """The chat fields the gateway acts on."""
        return read_chat_fields(payload)

    def prompt_values(self, payload: dict[str, Any]) -> tuple[object, ...]:
        """The messages, which the chat template renders in order."""
        return (payload.get("messages"),)

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Raise `top_logprobs` to k (turning `logprobs` on); trim back to the client's k."""
        if not fields.logprobs:
            if payload.get("top_logprobs") is not None:
                return LogprobPlan()  # invalid on its own: let the backend say so
            _pin_echoed_prompt_logprobs(payload, fields, 0)  # 0 is never refused
            payload["logprobs"] = True
            payload["top_logprobs"] = k
            return LogprobPlan(strip=True, captured_k=k, capture=True)
        client_k = fields.top_logprobs
        if client_k < 0:
            return LogprobPlan()  # -1 asks for the whole vocabulary: vLLM decides
        if client_k >= k:
            return LogprobPlan(captured_k=client_k, capture=True)
        if not _pin_echoed_prompt_logprobs(payload, fields, client_k):
            return LogprobPlan(captured_k=client_k, capture=True)
        payload["top_logprobs"] = k
        # Chat lists put the sampled token first, so the first client_k entries are what the
        # client would have got: trimming commutes with vLLM's ordering (up to exact ties).
        return LogprobPlan(client_top_k=client_k, captured_k=k, capture=True)

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A chat response's meter."""
        return ChatMeter(plan, fingerprint)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse fields beyond chat's that litellm would act on."""
        check_litellm_params(payload, CHAT_FIELDS)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """litellm's chat call."""
        return await litellm.acompletion(**arguments)
