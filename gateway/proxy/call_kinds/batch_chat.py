"""The batch chat adapter (`/v1/chat/completions/batch`): many conversations, one JSON body.

vLLM answers a chat completion with one choice per conversation and never streams it, so chat's
meter and logprob plan apply unchanged. Conversations may hold text only: the gateway's media
check reads chat's `messages`, not lists of them.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import GatewayError
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import RequestFields

PATH = "/v1/chat/completions/batch"
# A bound of the gateway's own: each conversation is a generation on the backend.
MAX_CONVERSATIONS = 256


def _check_conversations(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise GatewayError(400, "`messages` must be a non-empty list of conversations.", "messages")
    if len(messages) > MAX_CONVERSATIONS:
        raise GatewayError(
            400, f"At most {MAX_CONVERSATIONS} conversations per batch call.", "messages"
        )
    for conversation in messages:
        if not isinstance(conversation, list):
            raise GatewayError(400, "Each conversation must be a list of messages.", "messages")
        for message in conversation:
            if isinstance(message, dict) and not isinstance(message.get("content"), str | None):
                raise GatewayError(
                    400,
                    "Batch conversations take text `content` only through this gateway; "
                    "send media in `/v1/chat/completions`.",
                    "messages",
                )


class BatchChatCompletions(ChatCompletions):
    """vLLM's batch chat completions (non-streaming, one choice per conversation)."""

    path = PATH

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """Chat's fields; streaming is refused (vLLM would answer one body anyway)."""
        _check_conversations(payload.get("messages"))
        if payload.get("stream"):
            raise GatewayError(
                400, "`/v1/chat/completions/batch` does not stream; leave `stream` unset.", "stream"
            )
        return super().read_fields(payload)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: litellm has no batch chat API."""
        refuse_litellm(PATH, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(PATH, arguments)
