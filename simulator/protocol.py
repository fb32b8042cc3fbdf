"""Request bodies of the OpenAI-compatible endpoints, permissive like vLLM's (extras allowed)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


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
    """`stream_options`; vLLM defaults include_usage to true once the object is given."""

    include_usage: bool | None = True
    continuous_usage_stats: bool | None = False


class SamplingFields(OpenAIModel):
    """Sampling parameters shared by chat and completions."""

    model: str | None = None
    n: int | None = 1
    seed: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_tokens: int = 0
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    echo: bool = False
    prompt_logprobs: int | None = None
    priority: int = 0
    request_id: str | None = None
    return_token_ids: bool | None = None
    return_tokens_as_token_ids: bool | None = None
    frequency_penalty: float | None = 0.0
    presence_penalty: float | None = 0.0
    repetition_penalty: float | None = None
    logit_bias: dict[str, float] | None = None
    user: str | None = None


class ChatCompletionRequest(SamplingFields):
    """Body of POST /v1/chat/completions."""

    messages: list[ChatMessage]
    logprobs: bool | None = False
    top_logprobs: int | None = 0
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    add_generation_prompt: bool = True
    tools: list[dict[str, Any]] | None = None


class CompletionRequest(SamplingFields):
    """Body of POST /v1/completions."""

    prompt: list[int] | list[list[int]] | str | list[str] | None = None
    logprobs: int | None = None
    max_tokens: int | None = 16
    suffix: str | None = None


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
