"""The Responses API adapter (`/v1/responses`): its fields, plan, meter and stored responses.

vLLM keeps stored responses in one server process and checks no owner. On a model without
`responses_store` nothing is stored upstream (`store` is sent false) and what would reach a
stored response (`background`, `previous_response_id`) is refused; with it, each stored
response is owned by its team and follow-ups are pinned to its backend (`responses_store.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.errors import GatewayError
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.responses_meter import ResponsesMeter
from gateway.proxy.call_kinds.responses_store import (
    ENABLE_STORE,
    StoredPlacement,
    held_on,
    new_response_id,
    owned_by,
)
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import (
    RESPONSES_LOGPROBS,
    RequestFields,
    read_responses_fields,
    responses_field,
)
from gateway.proxy.placement import ANYWHERE, Placement
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from gateway.response_owners.owners import StoredOwner
from plumbline.logprob_codec import CHAT

if TYPE_CHECKING:
    from gateway.config import ModelConfig
    from gateway.state import GatewayState

NO_STORED_RESPONSES = (
    "this model's backends keep no stored responses, so every response is created with "
    f"`store: false` (to enable them, {ENABLE_STORE})"
)


class Responses(CallKind):
    """OpenAI's Responses API, as vLLM serves it (text output; stored responses per model)."""

    # Each logprob entry has chat's item shape (token, logprob, top_logprobs[, bytes]).
    fmt = CHAT
    path = "/v1/responses"
    body_format = "a Responses API JSON object"
    stream_end = "event: response.completed"
    asks_stream_usage = False

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """The Responses fields the gateway acts on, read as vLLM reads them."""
        return read_responses_fields(payload)

    def prompt_values(self, payload: dict[str, Any]) -> tuple[object, ...]:
        """The instructions, rendered first, then the input."""
        return (payload.get("instructions"), payload.get("input"))

    async def place(
        self,
        state: GatewayState,
        payload: dict[str, Any],
        model: ModelConfig,
        plan: MeasurementPlan,
        team_id: int | None,
    ) -> Placement:
        """Store nothing, or store as the team's response; chains go to the owner's backend."""
        background = responses_field(payload, "background")
        previous = responses_field(payload, "previous_response_id")
        if not model.responses_store:
            _refuse_stored_features(background, previous)
            payload["store"] = False  # vLLM would serve it to any team that knows the id
            return ANYWHERE
        owners = state.response_owners
        pinned, unavailable = None, ""
        if previous is not None:
            owner = await owned_by(owners, previous, team_id)
            if owner.model != model.name:
                raise GatewayError(
                    400,
                    f"Response `{previous}` was made by model `{owner.model}`: chain onto it "
                    "with that model.",
                    "previous_response_id",
                )
            pinned, unavailable = owner.backend, held_on(previous, model.name)
        if not responses_field(payload, "store") or team_id is None:
            # vLLM refuses `background` without `store` itself, in its own words.
            if pinned is None:
                return ANYWHERE
            return StoredPlacement(owners, None, pinned, unavailable)
        stored = await owners.stored_count(team_id, model.name)
        if stored >= model.max_stored_responses_per_team:
            raise GatewayError(
                429,
                f"Your team keeps {stored} stored responses on `{model.name}`, its limit: send "
                "`store: false` (the backends never evict a stored response).",
                "store",
            )
        response_id = payload["request_id"] = new_response_id()
        created = StoredOwner(
            response_id,
            team_id,
            model.name,
            backend="",
            background=bool(background),
            added_top_logprobs=plan.captured_k if plan.strip_logprobs else None,
        )
        return StoredPlacement(owners, created, pinned, unavailable)

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
        """Refuse: this kind needs a vLLM backend."""
        refuse_litellm(self.path, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(self.path, arguments)


def _refuse_stored_features(background: Any, previous: Any) -> None:
    """The 400s of a model that stores nothing, naming the field and how to enable it."""
    if background:
        raise GatewayError(
            400, f"`background` is not available: {NO_STORED_RESPONSES}.", "background"
        )
    if previous is not None:
        raise GatewayError(
            400,
            f"`previous_response_id` is not available: {NO_STORED_RESPONSES}; "
            "send the earlier turns in `input` instead.",
            "previous_response_id",
        )
