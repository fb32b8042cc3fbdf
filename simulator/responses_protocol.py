"""Body of POST /v1/responses, permissive like vLLM's: the fields the simulator reads."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from simulator.protocol import ChatMessage, ContentPart, OpenAIModel

Include = Literal[
    "code_interpreter_call.outputs",
    "computer_call_output.output.image_url",
    "file_search_call.results",
    "message.input_image.image_url",
    "message.output_text.logprobs",
    "reasoning.encrypted_content",
]
LOGPROBS_INCLUDE = "message.output_text.logprobs"
# Content part types whose text reaches the prompt.
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def precheck_responses(data: dict[str, Any]) -> None:
    """vLLM's "before" check of the raw body: without tools, `tool_choice` becomes "none"."""
    tools = data.get("tools")
    choice = data.get("tool_choice", "auto")
    if not (isinstance(tools, list) and tools) and choice in ("auto", "none"):
        data["tool_choice"] = "none"


class InputItem(OpenAIModel):
    """One input item; only messages (with a role) become part of the prompt."""

    type: str | None = None
    role: str | None = None
    content: str | list[ContentPart] | None = None

    def as_message(self) -> ChatMessage | None:
        """The chat message this item stands for, or None for tool calls and outputs."""
        if self.role is None:
            return None
        if isinstance(self.content, list):
            text = "".join(p.text or "" for p in self.content if p.type in _TEXT_PARTS)
            return ChatMessage(role=self.role, content=text)
        return ChatMessage(role=self.role, content=self.content)


class ResponsesRequest(OpenAIModel):
    """Body of POST /v1/responses; fields in vLLM's order, so errors list alike."""

    background: bool | None = False
    include: list[Include] | None = None
    input: str | list[InputItem]
    instructions: str | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    metadata: dict[str, str] | None = None
    model: str | None = None
    parallel_tool_calls: bool | None = True
    previous_response_id: str | None = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] = "auto"
    store: bool | None = True
    stream: bool | None = False
    temperature: float | None = None
    tool_choice: Any = "auto"
    tools: list[dict[str, Any]] = Field(default_factory=list)
    top_logprobs: int | None = 0
    top_p: float | None = None
    top_k: int | None = None
    truncation: Literal["auto", "disabled"] | None = "disabled"
    user: str | None = None
    include_stop_str_in_output: bool = False
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    request_id: str | None = None
    priority: int = 0
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)
    repetition_penalty: float | None = None
    seed: int | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False

    def wants_logprobs(self) -> bool:
        """Output logprobs are returned only when `include` names them."""
        return LOGPROBS_INCLUDE in (self.include or ())

    def input_messages(self) -> list[ChatMessage]:
        """The new turn's messages: instructions as the system message, then the input."""
        messages = []
        if self.instructions is not None:
            messages.append(ChatMessage(role="system", content=self.instructions))
        if isinstance(self.input, str):
            messages.append(ChatMessage(role="user", content=self.input))
        else:
            messages += [m for item in self.input if (m := item.as_message()) is not None]
        return messages
