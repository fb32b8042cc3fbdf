"""Bodies of POST /v1/messages and /v1/messages/count_tokens (Anthropic Messages API, vLLM 0.32)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from simulator.protocol import ChatMessage

BlockType = Literal[
    "text",
    "image",
    "tool_use",
    "tool_result",
    "tool_reference",
    "thinking",
    "redacted_thinking",
    "tool_addition",
    "tool_removal",
]


class ContentBlock(BaseModel):
    """A content block; only text blocks reach the prompt."""

    type: BlockType
    text: str | None = None


def blocks_text(content: str | list[ContentBlock] | None) -> str:
    """The text of a string or of a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(block.text or "" for block in content if block.type == "text")


class AnthropicMessage(BaseModel):
    """One message of the conversation."""

    role: Literal["user", "assistant", "system"]
    content: str | list[ContentBlock]


class _Conversation(BaseModel):
    """What both request bodies share: model, messages and system prompt."""

    model: str
    messages: list[AnthropicMessage]

    @field_validator("model")
    @classmethod
    def _model_required(cls, value: str) -> str:
        if not value:
            raise ValueError("Model is required")
        return value

    def chat_messages(self, system: str | list[ContentBlock] | None) -> list[ChatMessage]:
        """The conversation as chat messages, the system prompt first."""
        messages = []
        if system is not None:
            messages.append(ChatMessage(role="system", content=blocks_text(system)))
        for message in self.messages:
            messages.append(ChatMessage(role=message.role, content=blocks_text(message.content)))
        return messages


class MessagesRequest(_Conversation):
    """Body of POST /v1/messages; fields in vLLM's order, so errors list alike."""

    max_tokens: int
    metadata: dict[str, Any] | None = None
    stop_sequences: list[str] | None = None
    stream: bool | None = False
    system: str | list[ContentBlock] | None = None
    temperature: float | None = None
    tool_choice: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    top_k: int | None = None
    top_p: float | None = None
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)

    @field_validator("max_tokens")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("max_tokens must be positive")
        return value


class CountTokensRequest(_Conversation):
    """Body of POST /v1/messages/count_tokens."""

    system: str | list[ContentBlock] | None = None
    tool_choice: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
