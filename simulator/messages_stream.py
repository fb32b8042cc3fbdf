"""Anthropic Messages answers, as vLLM 0.32 writes them: the events of a stream, or the body."""

from __future__ import annotations

from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.errors import ApiError
from simulator.sse import named_event


def anthropic_usage(job: ResponseJob) -> dict[str, Any]:
    """Usage in Anthropic's terms: cached prompt tokens are reported apart from `input_tokens`."""
    usage = job.usage(created_cache_tokens=0)
    details = usage["prompt_tokens_details"]
    data: dict[str, Any] = {"input_tokens": usage["prompt_tokens"]}
    data["output_tokens"] = usage["completion_tokens"]
    if details is not None:
        read, created = details["cached_tokens"], details["created_cache_tokens"]
        data["input_tokens"] = max(0, usage["prompt_tokens"] - read - created)
        data["cache_creation_input_tokens"] = created
        data["cache_read_input_tokens"] = read
    return data


def stop_fields(choice: Choice) -> tuple[str | None, str | None]:
    """vLLM's mapping of a finish to Anthropic's `stop_reason` and `stop_sequence`."""
    output = choice.output
    if output.finish_reason == "length":
        return "max_tokens", None
    if output.finish_reason != "stop":
        return None, None
    if isinstance(output.stop_reason, str):
        return "stop_sequence", output.stop_reason
    return "end_turn", None


class MessagesFormatter:
    """Writes message_start, one text block's events, message_delta and message_stop."""

    def __init__(self, job: ResponseJob) -> None:
        self.job = job

    def _message(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.job.options.response_id,
            "type": "message",
            "role": "assistant",
            "content": content,
            "model": self.job.options.model,
        }

    def head(self) -> bytes:
        """message_start (input tokens only) and the start of the text block."""
        prompt_tokens = sum(len(p.token_ids) for p in self.job.prompts)
        message = self._message([])
        message.update(
            stop_reason=None,
            stop_sequence=None,
            usage={"input_tokens": prompt_tokens, "output_tokens": 0},
        )
        return named_event(
            "message_start", {"type": "message_start", "message": message}
        ) + named_event(
            "content_block_start",
            {
                "type": "content_block_start",
                "content_block": {"type": "text", "text": ""},
                "index": 0,
            },
        )

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """A text delta; tokens that add no text (a partial character) send nothing."""
        text = choice.delta_text(start, end)
        if not text:
            return b""
        delta = {"type": "text_delta", "text": text}
        return named_event(
            "content_block_delta", {"type": "content_block_delta", "delta": delta, "index": 0}
        )

    def closing(self) -> bytes:
        """Block stop, the stop reason with the usage, message_stop."""
        reason, sequence = stop_fields(self.job.choices[0])
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": sequence},
            "usage": anthropic_usage(self.job),
        }
        return b"".join(
            (
                named_event("content_block_stop", {"type": "content_block_stop", "index": 0}),
                named_event("message_delta", delta),
                named_event("message_stop", {"type": "message_stop"}),
            )
        )

    def body(self) -> bytes:
        """The non-streaming message; null fields are left out, as vLLM leaves them."""
        choice = self.job.choices[0]
        reason, sequence = stop_fields(choice)
        data = self._message([{"type": "text", "text": choice.output.text}])
        data["stop_reason"] = reason
        if sequence is not None:
            data["stop_sequence"] = sequence
        data["usage"] = anthropic_usage(self.job)
        return orjson.dumps({k: v for k, v in data.items() if v is not None})

    def stream_error(self, error: ApiError) -> bytes:
        """A failed stream's end: vLLM's converter sends an `error` event and stops.

        vLLM cannot read the chat error chunk as a chat chunk, so the type is always
        `internal_error`; its message is pydantic's, here the engine error's own.
        """
        detail = {"type": "internal_error", "message": error.message}
        return named_event("error", {"type": "error", "error": detail})
