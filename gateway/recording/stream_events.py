"""A stored stream's SSE events, and the pieces each output's text arrives in across them.

An output is a chat or completion choice (its content, reasoning, each tool call's arguments),
a Responses output item's part (`response.*.delta` by output and content index) or a Messages
content block (`content_block_delta` by index). Read by shape, whatever the backend sent, so
the stored redaction and the span messages assemble the same texts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.tracing.input_messages import key_of

Slot = tuple[Any, Any]  # (container, key) of one string
NOT_JSON = object()  # an event with no `data:` line that parses as JSON (`[DONE]`, junk)
BLOCK_FIELDS = ("text", "partial_json", "thinking")


@dataclass(slots=True)
class StreamEvent:
    """One event: its name (if named), its parsed data (or NOT_JSON) and the text as sent."""

    name: str | None
    data: Any
    raw: str


def sse_events(body: str) -> list[StreamEvent]:
    """Every `\\n\\n`-separated piece of a stream, parsed where it is an event with JSON data."""
    events = []
    for raw in body.split("\n\n"):
        name: str | None = None
        lines = []
        for line in raw.strip().splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                lines.append(line[5:].strip())
        data: Any = NOT_JSON
        if lines and lines != ["[DONE]"]:
            try:
                data = orjson.loads("\n".join(lines))
            except orjson.JSONDecodeError:
                data = NOT_JSON
        events.append(StreamEvent(name, data, raw))
    return events


@dataclass(slots=True)
class OutputPieces:
    """Per output, the slots its text pieces are held in and its sampled-token entries."""

    texts: dict[Any, list[Slot]] = field(default_factory=dict)
    tokens: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    completion_logprobs: list[dict[str, Any]] = field(default_factory=list)

    def text(self, key: Any) -> str:
        """An output's text as its slots hold it now."""
        return "".join(container[slot] for container, slot in self.texts.get(key, ()))

    def _text(self, key: Any, container: Any, slot: Any) -> None:
        if isinstance(container, dict) and isinstance(container.get(slot), str):
            self.texts.setdefault(key, []).append((container, slot))

    def _tokens(self, key: Any, entries: Any) -> None:
        if isinstance(entries, list):
            self.tokens.setdefault(key, []).extend(e for e in entries if isinstance(e, dict))

    def add_choice(self, choice: dict[str, Any]) -> None:
        """A chat or completion choice's delta."""
        index = key_of(choice.get("index", 0))
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._text(("choice", index, "content"), delta, "content")
            reasoning = "reasoning_content" if "reasoning_content" in delta else "reasoning"
            self._text(("choice", index, "reasoning"), delta, reasoning)
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    key = ("choice", index, "tool", key_of(call.get("index", 0)))
                    self._text(key, call.get("function"), "arguments")
        else:
            self._text(("choice", index, "content"), choice, "text")
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
            self._tokens(("choice", index), logprobs["content"])
        elif isinstance(logprobs, dict):
            self.completion_logprobs.append(logprobs)

    def add_event(self, name: str | None, data: Any) -> None:
        """One parsed event, of whichever call kind it looks like."""
        if not isinstance(data, dict):
            return
        choices = data.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict):
                self.add_choice(choice)
        kind = data.get("type") if isinstance(data.get("type"), str) else name
        if not isinstance(kind, str):
            return
        if kind.startswith("response.") and kind.endswith(".delta"):
            at = tuple(key_of(data.get(k)) for k in ("output_index", "content_index"))
            where = (*at, key_of(data.get("summary_index")))
            self._text(("item", kind, *where), data, "delta")
            self._tokens(("item", *where), data.get("logprobs"))
        elif kind == "content_block_delta":
            for block_field in BLOCK_FIELDS:
                key = ("block", key_of(data.get("index")), block_field)
                self._text(key, data.get("delta"), block_field)


def output_pieces(events: list[StreamEvent]) -> OutputPieces:
    """The text pieces and sampled tokens of every output in a stream's events."""
    pieces = OutputPieces()
    for event in events:
        pieces.add_event(event.name, event.data)
    return pieces
