"""Request bodies of the OpenAI-compatible endpoints, permissive like vLLM's (extras allowed)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class OpenAIModel(BaseModel):
    """Unknown fields are accepted and ignored, as vLLM does."""

    model_config = ConfigDict(extra="allow")


class ContentPart(OpenAIModel):
    """One part of a multi-part message; only text parts reach the prompt."""

    type: str
    text: str | None = None


class ChatMessage(OpenAIModel):
    """A chat message as sent by the client."""

    role: str
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """The message's text content."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text or "" for part in self.content if part.type == "text")


class StreamOptions(OpenAIModel):
    """`stream_options`; without `include_usage` a stream has no usage, continuous or not."""

    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class ChatCompletionRequest(OpenAIModel):
    """Body of POST /v1/chat/completions; fields in vLLM's order, so errors list alike."""

    messages: list[ChatMessage]
    model: str | None = None
    frequency_penalty: float | None = 0.0
    logit_bias: dict[str, float] | None = None
    logprobs: bool | None = False
    top_logprobs: int | None = 0
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n: int | None = 1
    presence_penalty: float | None = 0.0
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    temperature: float | None = None
    top_p: float | None = None
    tools: list[dict[str, Any]] | None = None
    user: str | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    stop_token_ids: list[int] | None = None
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0
    skip_special_tokens: bool = True
    prompt_logprobs: int | None = None
    echo: bool = False
    add_generation_prompt: bool = True
    priority: int = 0
    request_id: str | None = None
    return_tokens_as_token_ids: bool | None = None
    return_token_ids: bool | None = None
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)


class CompletionRequest(OpenAIModel):
    """Body of POST /v1/completions; fields in vLLM's order, so errors list alike."""

    model: str | None = None
    prompt: list[int] | list[list[int]] | str | list[str] | None = None
    echo: bool | None = False
    frequency_penalty: float | None = 0.0
    logit_bias: dict[str, float] | None = None
    logprobs: int | None = None
    max_tokens: int | None = 16
    n: int = 1
    presence_penalty: float | None = 0.0
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    suffix: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    user: str | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    stop_token_ids: list[int] | None = None
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0
    skip_special_tokens: bool = True
    prompt_logprobs: int | None = None
    priority: int = 0
    request_id: str | None = None
    return_tokens_as_token_ids: bool | None = None
    return_token_ids: bool | None = None
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)

    @field_validator("max_tokens", mode="before")
    @classmethod
    def _null_is_default(cls, value: object) -> object:
        # vLLM's completions read `"max_tokens": null` as the default of 16.
        return 16 if value is None else value


SamplingFields = ChatCompletionRequest | CompletionRequest


class TokenizeRequest(OpenAIModel):
    """Body of POST /tokenize: either a prompt or chat messages."""

    model: str | None = None
    prompt: str | None = None
    messages: list[ChatMessage] | None = None
    add_special_tokens: bool = True
    add_generation_prompt: bool = True
    return_token_strs: bool | None = False


class DetokenizeRequest(OpenAIModel):
    """Body of POST /detokenize."""

    model: str | None = None
    tokens: list[int]
