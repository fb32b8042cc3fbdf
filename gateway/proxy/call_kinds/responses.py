"""The Responses API adapter (`/v1/responses`): its fields, plan, meter and refusals.

vLLM keeps stored responses in one server process and checks no owner, so until the gateway
records which team owns each response id, nothing is stored upstream (`store` is sent false)
and what would reach a stored response (`background`, `previous_response_id`) is refused.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import GatewayError
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.responses_meter import ResponsesMeter
from gateway.proxy.lax_values import (
    RESPONSES_LOGPROBS,
    RequestFields,
    read_responses_fields,
    responses_field,
)
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from plumbline.logprob_codec import CHAT

NO_STORED_RESPONSES = (
    "this gateway does not keep stored responses yet (it cannot tell which team owns one), "
    "so every response is created with `store: false`"
)


class Responses(CallKind):
    """OpenAI's Responses API, as vLLM serves it (text output, no stored responses)."""

    # Each logprob entry has chat's item shape (token, logprob, top_logprobs[, bytes]).
    fmt = CHAT
    path = "/v1/responses"
    body_format = "a Responses API JSON object"
    stream_end = "event: response.completed"
    asks_stream_usage = False

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """The Responses fields the gateway acts on; stored-response features are refused."""
        fields = read_responses_fields(payload)
        if responses_field(payload, "background"):
            raise GatewayError(
                400, f"`background` is not available: {NO_STORED_RESPONSES}.", "background"
            )
        if responses_field(payload, "previous_response_id") is not None:
            raise GatewayError(
                400,
                f"`previous_response_id` is not available: {NO_STORED_RESPONSES}; "
                "send the earlier turns in `input` instead.",
                "previous_response_id",
            )
        return fields

    def confine(self, payload: dict[str, Any]) -> None:
        """Store nothing upstream: vLLM would serve it to any team that knows the id."""
        payload["store"] = False

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Add the logprobs `include` and `top_logprobs: k`; null them again for the client."""
        if fields.logprobs:
            if fields.top_logprobs < 0:
                return LogprobPlan()  # vLLM decides what a negative count means
            # vLLM ranks each list itself: the client's own k is captured, never trimmed.
            return LogprobPlan(captured_k=fields.top_logprobs, capture=True)
        include = payload.get("include")
        payload["include"] = [*(include or ()), RESPONSES_LOGPROBS]
        payload["top_logprobs"] = k
        return LogprobPlan(strip=True, captured_k=k, capture=True)

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A Responses answer's meter."""
        return ResponsesMeter(plan, fingerprint)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: models served through litellm answer chat and completions only."""
        model = payload.get("model")
        raise GatewayError(
            404,
            f"The model `{str(model)[:200]}` is served through litellm, which this gateway "
            "uses for chat and completions only: `/v1/responses` needs a vLLM backend.",
            "model",
        )

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        raise GatewayError(404, "`/v1/responses` needs a vLLM backend.", "model")
