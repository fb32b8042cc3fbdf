"""Stored responses, as vLLM keeps them in memory with VLLM_ENABLE_RESPONSES_API_STORE=1."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from simulator.engine.sequence import RequestHandle
from simulator.protocol import ChatMessage


@dataclass(slots=True)
class StoredResponse:
    """A response object, the conversation that produced it and, in the background, its job.

    A streamed background response also keeps its SSE events (`events`, one event each), which
    `GET ...?stream=true` replays; `changed` wakes such readers, `ended` says no more will come.
    """

    response: dict[str, Any]
    messages: list[ChatMessage]
    handle: RequestHandle | None = None
    task: asyncio.Task[None] | None = None
    events: list[bytes] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False

    def conversation(self) -> list[ChatMessage]:
        """Its messages followed by its answer, for a request naming it `previous_response_id`."""
        texts = [
            part["text"]
            for item in self.response["output"]
            for part in item.get("content", [])
            if part.get("type") == "output_text"
        ]
        answer = ChatMessage(role="assistant", content="".join(texts))
        return [*self.messages, answer] if texts else list(self.messages)


@dataclass
class ResponseStore:
    """Responses by id; never evicted, as in vLLM (its store is a plain dict too)."""

    responses: dict[str, StoredResponse] = field(default_factory=dict)

    def get(self, response_id: str) -> StoredResponse | None:
        """The stored response, or None."""
        return self.responses.get(response_id)

    def put(self, response_id: str, stored: StoredResponse) -> None:
        """Keep (or replace) a response."""
        self.responses[response_id] = stored

    def finish(self, response_id: str, final: dict[str, Any]) -> None:
        """Record a finished response, unless it was cancelled meanwhile."""
        stored = self.responses.get(response_id)
        if stored is None or stored.response["status"] == "cancelled":
            return
        stored.response = final
        stored.handle = stored.task = None
