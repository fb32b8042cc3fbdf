"""The Responses API's answer to one generation: its SSE events in vLLM's order, or its body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.responses_body import (
    ResponseHead,
    final_status,
    message_item,
    output_logprobs,
    response_usage,
    text_part,
)
from simulator.sse import named_event
from simulator.tokenizer import Tokenizer

Finished = Callable[[dict[str, Any]], None]


class ResponsesFormatter:
    """Writes `response.*` events (keys sorted, as vLLM's) and the final response object.

    `on_finished` gets the final object once, for the response store.
    """

    def __init__(
        self,
        job: ResponseJob,
        tokenizer: Tokenizer,
        head: ResponseHead,
        on_finished: Finished | None = None,
    ) -> None:
        self.job = job
        self.tokenizer = tokenizer
        self.head_fields = head
        self.on_finished = on_finished
        self._sequence = 0

    def _event(self, kind: str, **data: Any) -> bytes:
        data.update(sequence_number=self._sequence, type=kind)
        self._sequence += 1
        return named_event(kind, dict(sorted(data.items())))

    def _logprobs(self, start: int, end: int, with_bytes: bool) -> list[dict[str, Any]] | None:
        top = self.job.options.top_logprobs
        if top is None:
            return None
        choice = self.job.choices[0]
        return output_logprobs(self.tokenizer, choice, start, end, top, with_bytes)

    def final_response(self) -> dict[str, Any]:
        """The finished response object, as the body, `response.completed` and the store have it."""
        output = self.job.choices[0].output
        logprobs = self._logprobs(0, len(output.token_ids), with_bytes=True)
        item = message_item(self.head_fields, output.text, logprobs, "completed")
        final = self.head_fields.response(
            final_status(self.job),
            [item],
            response_usage(self.job),
            self.job.request_metrics(),
            finished=True,
        )
        if self.on_finished is not None:
            self.on_finished(final)
            self.on_finished = None
        return final

    def head(self) -> bytes:
        """created, in_progress, the message item and its empty text part."""
        started = self.head_fields.response("in_progress", [])
        item = message_item(self.head_fields, "", None, "in_progress")
        empty = text_part("", [])
        ids = {"item_id": self.head_fields.message_id, "output_index": 0}
        return b"".join(
            (
                self._event("response.created", response=started),
                self._event("response.in_progress", response=started),
                self._event("response.output_item.added", item=item, output_index=0),
                self._event("response.content_part.added", content_index=0, part=empty, **ids),
            )
        )

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """One text delta; tokens that add no text (a partial UTF-8 character) send nothing."""
        text = choice.delta_text(start, end)
        if not text:
            return b""
        logprobs = self._logprobs(start, end, with_bytes=False) or []
        return self._event(
            "response.output_text.delta",
            content_index=0,
            delta=text,
            item_id=self.head_fields.message_id,
            logprobs=logprobs,
            output_index=0,
        )

    def closing(self) -> bytes:
        """text done, part done, item done, then `response.completed` with usage."""
        final = self.final_response()
        item = final["output"][0]
        part = item["content"][0]
        ids = {"item_id": item["id"], "output_index": 0}
        return b"".join(
            (
                self._event(
                    "response.output_text.done",
                    content_index=0,
                    logprobs=[],
                    text=part["text"],
                    **ids,
                ),
                self._event("response.content_part.done", content_index=0, part=part, **ids),
                self._event("response.output_item.done", item=item, output_index=0),
                self._event("response.completed", response=final),
            )
        )

    def body(self) -> bytes:
        """The non-streaming response."""
        return orjson.dumps(self.final_response())
