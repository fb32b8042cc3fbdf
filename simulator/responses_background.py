"""Background Responses: generated with no client attached, as vLLM's background tasks do.

A streamed background request (`background` and `stream`) records each SSE event; its POST and
any `GET /v1/responses/{id}?stream=true` replay them, the latter from `starting_after + 1`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse

from simulator.responses_store import StoredResponse
from simulator.responses_stream import ResponsesFormatter
from simulator.state import SimulatorState
from simulator.streaming import SimulatedConnectionDrop


def start_in_background(
    state: SimulatorState, stored: StoredResponse, formatter: ResponsesFormatter
) -> None:
    """Run the job on the engine from now on; the task is kept with the stored response."""
    loop = asyncio.get_running_loop()
    stored.task = loop.create_task(_run(state, stored, formatter))


def _record(stored: StoredResponse, chunk: bytes) -> None:
    if stored.events is None or not chunk:
        return
    stored.events += [event + b"\n\n" for event in chunk.split(b"\n\n") if event]
    stored.changed.set()


async def _run(
    state: SimulatorState, stored: StoredResponse, formatter: ResponsesFormatter
) -> None:
    handle = formatter.job.handle
    choice = formatter.job.choices[0]
    stored.response = {**stored.response, "status": "in_progress"}
    state.engine.submit(handle)
    head = formatter.head()
    try:
        while True:
            if choice.sequence.emitted > choice.sent:
                _record(
                    stored, head + formatter.tokens(choice, choice.sent, choice.sequence.emitted)
                )
                head = b""
                choice.sent = choice.sequence.emitted
            if handle.done:
                break
            await handle.event.wait()
            handle.event.clear()
        if handle.aborted or handle.failed:
            if stored.response["status"] != "cancelled":
                stored.response = {**stored.response, "status": "failed"}
            return
        _record(stored, head + formatter.closing())
        formatter.final_response()
    finally:
        stored.ended = True
        stored.changed.set()


def replay(stored: StoredResponse, start: int) -> StreamingResponse:
    """The recorded events from index `start`, then the rest as they come, until the end;
    nothing but a dropped connection for a response that recorded none, as vLLM."""

    async def events() -> AsyncIterator[bytes]:
        if stored.events is None:
            raise SimulatedConnectionDrop  # not a streamed background response (see retrieve)
        sent = start
        while True:
            stored.changed.clear()
            recorded = stored.events or []
            while sent < len(recorded):
                yield recorded[sent]
                sent += 1
            if stored.ended:
                return
            await stored.changed.wait()

    return StreamingResponse(events(), media_type="text/event-stream")
