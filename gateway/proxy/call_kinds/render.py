"""The render adapters (`/v1/chat/completions/render` and the like): templates, no inference.

vLLM renders a request into the token ids and sampling parameters `/inference/v1/generate`
takes, without touching the engine, so each is a cheap row: status, latency, team, feature;
no tokens and no cost. The body passes through unchanged.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import RequestFields, read_completion_fields
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from plumbline.logprob_codec import CHAT

RENDER_PATHS = (
    "/v1/chat/completions/render",
    "/v1/completions/render",
    "/v1/messages/render",
    "/v1/responses/render",
)


class PassThroughMeter(ResponseMeter):
    """Sends the body as it came; notes only an error's status and message."""

    def __init__(self) -> None:
        self.done = False
        self.fingerprint = None
        self.failure: Failure | None = None

    def body(self, body: bytes, status: int) -> bytes:
        """The body unchanged; an error is kept for the record."""
        if status >= 400:
            try:
                error: Any = orjson.loads(body).get("error")
            except (orjson.JSONDecodeError, AttributeError):
                error = None
            self.failure = Failure.upstream(
                status, error or {"message": body[:500].decode(errors="replace")}
            )
        return body

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Never a stream, but passed through if one came."""
        return [event]

    def flush(self) -> list[bytes]:
        """Nothing is held."""
        return []

    def result(self) -> Metered:
        """No usage: rendering does no inference."""
        return Metered(failure=self.failure)


class Render(CallKind):
    """One of vLLM's render routes."""

    fmt = CHAT
    asks_stream_usage = False
    takes_priority = False  # nothing is scheduled

    def __init__(self, path: str) -> None:
        self.path = path

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """None of the body's fields: nothing is generated."""
        return read_completion_fields({})

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Nothing to capture."""
        return LogprobPlan()

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A pass-through meter."""
        return PassThroughMeter()

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: litellm renders nothing."""
        refuse_litellm(self.path, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(self.path, arguments)
