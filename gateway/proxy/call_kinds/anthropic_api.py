"""What the Anthropic-shaped routes share: the key in `x-api-key`, Anthropic's error shape.

The anthropic SDK sends its key as `x-api-key` (or, given an auth token, as a Bearer header) and
reads errors as `{"type": "error", "error": {"type", "message"}}` with a type named per status.
Errors vLLM answers itself pass as vLLM sent them; these are the gateway's own.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.errors import GatewayError
from gateway.proxy.asgi_io import header_text
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import ChatFields, RequestFields
from gateway.proxy.request_plan import LogprobPlan
from plumbline.logprob_codec import CHAT

# Anthropic's error types, by the status the gateway answers.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def anthropic_error_type(status: int) -> str:
    """The Anthropic error type of a status (4xx it does not name are invalid requests)."""
    return ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


def anthropic_error_body(error: GatewayError) -> bytes:
    """`{"type": "error", "error": {"type", "message"}}` for an error the gateway raised."""
    detail = {"type": anthropic_error_type(error.status), "message": error.message}
    return orjson.dumps({"type": "error", "error": detail})


def no_logprobs_fields(stream: bool, max_tokens: int | None) -> RequestFields:
    """The acted-on fields of an Anthropic request: one answer, never any logprobs."""
    return RequestFields(ChatFields(stream=stream, max_tokens=max_tokens))


class AnthropicKind(CallKind):
    """A route of vLLM's Anthropic Messages API: its key header, error shape, no logprobs."""

    # vLLM's Messages API takes no logprobs field: nothing is captured (the format is unused).
    fmt = CHAT
    body_format = "an Anthropic Messages JSON object"
    stream_end = "event: message_stop"
    # vLLM asks its own chat stream for usage (continuous) and sends it in message_delta.
    asks_stream_usage = False
    key_hint = "`x-api-key: <key>` or `Authorization: Bearer <key>`"
    takes_priority = False  # not a Messages field (vLLM ignores it)
    no_logprobs_reason = (
        "vLLM's Anthropic Messages API takes no logprobs field, so calls to it carry no "
        "logprobs: none were asked for, and none are stored or summarised."
    )

    def presented_key(self, headers: dict[bytes, bytes]) -> str | None:
        """A Bearer token if sent, else `x-api-key` (how the anthropic SDK sends its key)."""
        bearer = super().presented_key(headers)
        if bearer is not None:
            return bearer
        return header_text(headers, b"x-api-key", 512) or None

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Nothing to ask for: this API has no logprobs."""
        return LogprobPlan()

    def error_body(self, error: GatewayError) -> bytes:
        """Anthropic's error shape."""
        return anthropic_error_body(error)

    def stream_error(self, error: GatewayError) -> bytes:
        """An `error` event, as vLLM ends a Messages stream that failed."""
        return b"event: error\ndata: " + anthropic_error_body(error) + b"\n\n"

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: this kind needs a vLLM backend."""
        refuse_litellm(self.path, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(self.path, arguments)
