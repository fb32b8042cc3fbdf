"""The Anthropic Messages API adapters (`/v1/messages`, `/v1/messages/count_tokens`) of vLLM.

vLLM runs a Messages request as a chat completion and answers in Anthropic's shapes. Its
Messages API takes no logprobs field, so these calls carry none, and nothing is added upstream:
the client gets vLLM's bytes. The shared tenant rules (`tenant_fields.py`) cover this API's
fields too: `cache_salt` is set per team, the engine-steering fields are refused, and image
sources that name a URL are held to the model's media domains.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.errors import GatewayError
from gateway.metering.metered import Failure, Metered
from gateway.proxy.call_kinds.anthropic_api import AnthropicKind, no_logprobs_fields
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.call_kinds.messages_meter import MessagesMeter, parse_object, upstream_failure
from gateway.proxy.lax_values import RequestFields
from gateway.proxy.request_plan import MeasurementPlan


class MessagesFields(BaseModel):
    """The acted-on fields of vLLM's AnthropicMessagesRequest, with its types and defaults."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    stream: bool | None = False
    max_tokens: int


def _refusal(error: ValidationError) -> GatewayError:
    first = error.errors(include_url=False)[0]
    # vLLM names a schema error's parameter by its place in the body: `body.max_tokens`.
    where = ".".join(["body", *(str(part) for part in first["loc"])])
    got = "" if first["type"] == "missing" else f" (got {repr(first.get('input'))[:100]})"
    return GatewayError(
        400,
        f"`{where}`: {first['msg']}{got}. Send it as the Messages API documents it.",
        where,
    )


class Messages(AnthropicKind):
    """`POST /v1/messages`, streaming and not."""

    path = "/v1/messages"

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """`stream` and `max_tokens`, read as vLLM reads them (a 400 if it would refuse)."""
        subset = {name: payload[name] for name in ("stream", "max_tokens") if name in payload}
        try:
            fields = MessagesFields.model_validate(subset)
        except ValidationError as error:
            raise _refusal(error) from None
        return no_logprobs_fields(bool(fields.stream), fields.max_tokens)

    def prompt_values(self, payload: dict[str, Any]) -> tuple[object, ...]:
        """The system prompt, rendered first, then the messages."""
        return (payload.get("system"), payload.get("messages"))

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A Messages answer's meter."""
        return MessagesMeter(plan, fingerprint)


class CountTokensMeter(ResponseMeter):
    """Passes a count through; only an error is read (the count is not a use of tokens)."""

    def __init__(self) -> None:
        self.done = True
        self.fingerprint: str | None = None
        self.failure: Failure | None = None

    def body(self, body: bytes, status: int) -> bytes:
        """The body unchanged; an error body is read for the record."""
        if status >= 400:
            self.failure = upstream_failure(status, parse_object(body, "error"))
        return body

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """This route does not stream: any event passes."""
        return [event]

    def flush(self) -> list[bytes]:
        """Nothing is held back."""
        return []

    def result(self) -> Metered:
        """No tokens and no times: a count costs no generation."""
        return Metered(failure=self.failure)


class CountTokens(AnthropicKind):
    """`POST /v1/messages/count_tokens`: passed through, recorded as a call with no usage."""

    path = "/v1/messages/count_tokens"

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """Nothing to read: the route never streams and generates nothing."""
        return no_logprobs_fields(False, None)

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A meter that reads errors only."""
        return CountTokensMeter()
