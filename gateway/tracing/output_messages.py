"""A stored response in the GenAI conventions' structure: one output message per choice.

Built from the response as stored (redacted): a whole body, or a stream whose text is assembled
per output from its deltas, read as the stored redaction reads them (`stream_events`;
`gen-ai-output-messages.json` of 1.41.0). `redact` is applied to each assembled text too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from gateway.recording.stream_events import BLOCK_FIELDS, NOT_JSON, OutputPieces, sse_events
from gateway.tracing.input_messages import (
    Message,
    Part,
    anthropic_block,
    anthropic_parts,
    key_of,
    listed,
    text_part,
    tool_arguments,
)

Redact = Callable[[str], str]
# The conventions' finish reasons, from what OpenAI and Anthropic APIs answer.
FINISH_REASONS = {
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "tool_use": "tool_call",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "max_output_tokens": "length",
}


def finish_reason(reason: Any) -> str:
    """A finish reason in the conventions' terms (theirs pass as they are, none is `stop`)."""
    return FINISH_REASONS.get(str(reason), str(reason)) if reason is not None else "stop"


def _sse(stored: str) -> list[tuple[str | None, Any]]:
    """The events of a stored stream with JSON data: each one's name (if named) and data."""
    return [(e.name, e.data) for e in sse_events(stored) if e.data is not NOT_JSON]


def _choices(obj: Any) -> list[dict[str, Any]]:
    choices = obj.get("choices") if isinstance(obj, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _choice_message(choice: dict[str, Any]) -> Message:
    message = choice.get("message")
    parts: list[Part] = []
    role = "assistant"
    if isinstance(message, dict):
        role = str(message.get("role") or role)
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            parts.append({"type": "reasoning", "content": reasoning})
        if isinstance(message.get("content"), str):
            parts.append(text_part(message["content"]))
        for call in listed(message.get("tool_calls")):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                arguments = tool_arguments(function.get("arguments"))
                part = {"type": "tool_call", "id": call.get("id"), "name": function.get("name")}
                parts.append(part | {"arguments": arguments})
    elif isinstance(choice.get("text"), str):
        parts.append(text_part(choice["text"]))
    reason = finish_reason(choice.get("finish_reason"))
    return {"role": role, "parts": parts, "finish_reason": reason}


class _Choice:
    """One streamed choice, assembled from its deltas."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[Any, dict[str, Any]] = {}
        self.finish: Any = None

    def add(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str):
                self.reasoning.append(reasoning)
            for call in listed(delta.get("tool_calls")):
                if isinstance(call, dict):
                    self._call(call)
        elif isinstance(choice.get("text"), str):
            self.text.append(choice["text"])
        if choice.get("finish_reason") is not None:
            self.finish = choice["finish_reason"]

    def _call(self, call: dict[str, Any]) -> None:
        held = self.calls.setdefault(key_of(call.get("index", 0)), {"arguments": []})
        nested = call.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else {}
        for key, value in (("id", call.get("id")), ("name", function.get("name"))):
            if isinstance(value, str):
                held[key] = value
        if isinstance(function.get("arguments"), str):
            held["arguments"].append(function["arguments"])

    def message(self, redact: Redact) -> Message:
        parts: list[Part] = []
        if self.reasoning:
            parts.append({"type": "reasoning", "content": redact("".join(self.reasoning))})
        if self.text:
            parts.append(text_part(redact("".join(self.text))))
        for held in self.calls.values():
            arguments = tool_arguments(redact("".join(held["arguments"])))
            part = {"type": "tool_call", "id": held.get("id"), "name": held.get("name")}
            parts.append(part | {"arguments": arguments})
        return {"role": "assistant", "parts": parts, "finish_reason": finish_reason(self.finish)}


def _choices_stream(events: list[tuple[str | None, Any]], redact: Redact) -> list[Message]:
    choices: dict[Any, _Choice] = {}
    for _, obj in events:
        for choice in _choices(obj):
            choices.setdefault(key_of(choice.get("index", 0)), _Choice()).add(choice)
    return [choice.message(redact) for choice in choices.values()]


def _response_object(response: dict[str, Any]) -> list[Message]:
    parts: list[Part] = []
    for item in listed(response.get("output")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            call = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name")}
            parts.append(call | {"arguments": tool_arguments(item.get("arguments"))})
            continue
        for piece in listed(item.get("content")):
            if isinstance(piece, dict) and isinstance(piece.get("text"), str):
                kind = "reasoning" if item.get("type") == "reasoning" else "text"
                parts.append({"type": kind, "content": piece["text"]})
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if reason is None and response.get("status") not in ("completed", None):
        reason = response.get("status")
    if reason is None and any(p["type"] == "tool_call" for p in parts):
        reason = "tool_call"
    return [{"role": "assistant", "parts": parts, "finish_reason": finish_reason(reason)}]


def _responses_stream(events: list[tuple[str | None, Any]], redact: Redact) -> list[Message]:
    for name, obj in reversed(events):
        if name in ("response.completed", "response.incomplete", "response.failed"):
            response = obj.get("response") if isinstance(obj, dict) else None
            if isinstance(response, dict):
                return _redacted(_response_object(response), redact)
    # Cut short before its final event: the text deltas there are.
    pieces = _pieces(events)
    texts = ("item", "response.output_text.delta")
    text = "".join(pieces.text(key) for key in pieces.texts if key[:2] == texts)
    parts = [text_part(redact(text))] if text else []
    return [{"role": "assistant", "parts": parts, "finish_reason": "error"}]


def _message_object(message: dict[str, Any]) -> list[Message]:
    parts = anthropic_parts(message.get("content"))
    reason = finish_reason(message.get("stop_reason"))
    role = str(message.get("role") or "assistant")
    return [{"role": role, "parts": parts, "finish_reason": reason}]


def _messages_stream(events: list[tuple[str | None, Any]], redact: Redact) -> list[Message]:
    blocks: dict[Any, dict[str, Any]] = {}
    reason: Any = None
    for name, obj in events:
        if not isinstance(obj, dict):
            continue
        if name == "content_block_start" and isinstance(obj.get("content_block"), dict):
            blocks[key_of(obj.get("index"))] = dict(obj["content_block"])
        elif name == "message_delta" and isinstance(obj.get("delta"), dict):
            reason = obj["delta"].get("stop_reason")
    pieces = _pieces(events)
    parts: list[Part] = []
    for index, block in blocks.items():
        text = redact("".join(pieces.text(("block", index, f)) for f in BLOCK_FIELDS))
        if block.get("type") == "tool_use":
            block["input"] = tool_arguments(text) if text else block.get("input")
        elif block.get("type") == "thinking":
            block["thinking"] = text
        else:
            block["text"] = text
        part = anthropic_block(block)
        if part is not None:
            parts.append(part)
    return [{"role": "assistant", "parts": parts, "finish_reason": finish_reason(reason)}]


def _pieces(events: list[tuple[str | None, Any]]) -> OutputPieces:
    pieces = OutputPieces()
    for name, obj in events:
        pieces.add_event(name, obj)
    return pieces


def _redacted(messages: list[Message], redact: Redact) -> list[Message]:
    for message in messages:
        for part in message["parts"]:
            if isinstance(part.get("content"), str):
                part["content"] = redact(part["content"])
    return messages


def _whole(endpoint: str, obj: dict[str, Any]) -> list[Message]:
    if endpoint == "/v1/responses":
        return _response_object(obj)
    if endpoint == "/v1/messages":
        return _message_object(obj)
    return [_choice_message(c) for c in _choices(obj)]


STREAMS = {
    "/v1/chat/completions": _choices_stream,
    "/v1/completions": _choices_stream,
    "/v1/responses": _responses_stream,
    "/v1/messages": _messages_stream,
}


def output_messages(
    endpoint: str, stored: str, stream: bool, redact: Redact = str
) -> list[Message] | None:
    """The output messages of a stored response (None: not of this form, or an error)."""
    assemble = STREAMS.get(endpoint)
    if assemble is None:
        return None
    if stream and stored.lstrip().startswith(("data:", "event:")):
        return assemble(_sse(stored), redact) or None
    try:
        obj = orjson.loads(stored)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or "error" in obj or obj.get("type") == "error":
        return None
    return _whole(endpoint, obj) or None
