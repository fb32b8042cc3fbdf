"""The completions adapter (`/v1/completions`): its fields, plan, meter and restoring."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.choices_meter import ChoicesMeter
from gateway.proxy.lax_values import RequestFields, read_completion_fields
from gateway.proxy.litellm_params import COMPLETION_FIELDS, check_litellm_params
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from plumbline.logprob_codec import COMPLETION


class CompletionsMeter(ChoicesMeter):
    """Keeps each choice's `logprobs` object as sent; every choice of a chunk is a token."""

    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        self.logprob_chunks.append((index, raw))
        return 1

    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            return False
        if self.plan.capture_logprobs:
            self.logprob_chunks.append((choice.get("index", 0), orjson.dumps(logprobs)))
        if self.plan.strip_logprobs:
            choice["logprobs"] = None
            return True
        # (A completions plan never trims: its top-k lists cannot be narrowed exactly.)
        return False


class Completions(CallKind):
    """OpenAI (legacy) completions, as vLLM serves them."""

    fmt = COMPLETION
    path = "/v1/completions"

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """The completions fields the gateway acts on."""
        return read_completion_fields(payload)

    def prompt_values(self, payload: dict[str, Any]) -> tuple[object, ...]:
        """The prompt (text, token ids, or a batch of either)."""
        return (payload.get("prompt"),)

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Ask for `logprobs: k` when the client asked for none; else capture the client's k."""
        wants = fields.logprobs
        if wants is None:
            if fields.echo or payload.get("echo"):
                # (A raw `"echo": "no"` still counts for vLLM's beam-search check.)
                # vLLM would then add prompt logprobs too (costly, and a visible
                # `prompt_logprobs` list), and no request field can ask for none of them:
                # capture nothing instead.
                return LogprobPlan()
            payload["logprobs"] = k
            return LogprobPlan(strip=True, captured_k=k, capture=True)
        if wants >= 0:
            # Completion lists are keyed by token, so a narrower list cannot be derived from a
            # wider one exactly: the client's own k is captured instead.
            return LogprobPlan(captured_k=int(wants), capture=True)
        return LogprobPlan()

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A completions response's meter."""
        return CompletionsMeter(plan, fingerprint)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse fields beyond completions' that litellm would act on."""
        check_litellm_params(payload, COMPLETION_FIELDS)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """litellm's text completion call."""
        return await litellm.atext_completion(**arguments)
