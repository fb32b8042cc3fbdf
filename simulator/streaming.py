"""The ASGI response of a generation request: queues it, streams or returns it, injects faults.

A watcher task reads `receive()` for the client's disconnect, so a request is cancelled (its
engine slots freed) the moment the connection drops, not at the next write.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import orjson
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from simulator.choices import Choice, ResponseJob
from simulator.engine.scheduler import Engine
from simulator.errors import ApiError, engine_dead_error, injected_error
from simulator.faults import GARBAGE, FaultPlan
from simulator.sim_stats import SimStats
from simulator.sse import DONE

_SSE_HEADERS = ((b"content-type", b"text/event-stream; charset=utf-8"),)


class SimulatedConnectionDrop(Exception):
    """Raised to make the server drop the connection mid-response (fault injection)."""


class Formatter(Protocol):
    """What the formatters of each generation API provide."""

    def head(self) -> bytes: ...
    def tokens(self, choice: Choice, start: int, end: int) -> bytes: ...
    def closing(self) -> bytes: ...
    def body(self) -> bytes: ...


def sse_error(error: ApiError) -> bytes:
    """An error after the stream began: an `error` event, then [DONE]."""
    return b"data: " + orjson.dumps(error.body()) + b"\n\n" + DONE


class GenerationResponse(Response):
    """Runs one prepared generation job against the engine and writes its response."""

    def __init__(
        self,
        job: ResponseJob,
        formatter: Formatter,
        engine: Engine,
        stats: SimStats,
        plan: FaultPlan,
    ) -> None:
        super().__init__(status_code=200)
        self.job = job
        self.formatter = formatter
        self.engine = engine
        self.stats = stats
        self.plan = plan
        self._gone = asyncio.Event()
        self._submitted = False
        self._completed = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI entry point."""
        self.stats.in_flight += 1
        watcher = asyncio.get_running_loop().create_task(self._watch(receive))
        try:
            await self._run(send)
        finally:
            watcher.cancel()
            self.stats.in_flight -= 1

    async def _run(self, send: Send) -> None:
        plan = self.plan
        if plan.stall_first_byte_s:
            if await self._sleep(plan.stall_first_byte_s):
                return
            self.job.handle.arrival = 0.0  # the stall is not the engine's queue
        stream = self.job.options.stream
        if plan.garbage_body or (plan.garbage_after_tokens is not None and not stream):
            self.stats.faults["garbage"] += 1
            await self._finish(send, GARBAGE, "application/json")
            return
        immediate_error = plan.error_status is not None and (
            plan.error_after_tokens is None or not stream
        )
        if immediate_error and plan.error_status is not None:
            self.stats.faults["error"] += 1
            error = injected_error(plan.error_status)
            await self._finish(send, orjson.dumps(error.body()), "application/json", error.status)
            return
        self._submitted = True
        self.engine.submit(self.job.handle)
        if self.job.options.stream:
            await self._stream(send)
        else:
            await self._full(send)

    async def _watch(self, receive: Receive) -> None:
        while True:
            message: Message = await receive()
            if message["type"] != "http.disconnect":
                continue
            if not self._completed:
                disconnected = time.perf_counter()
                handle = self.job.handle
                handle.disconnected_at = disconnected
                if self._submitted:
                    self.engine.abort(handle)
                self.stats.record_cancel(
                    self.job.options.response_id, disconnected, time.perf_counter()
                )
                self._gone.set()
                handle.event.set()
            return

    async def _sleep(self, seconds: float) -> bool:
        """Wait, unless the client leaves first; True if it left."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._gone.wait(), seconds)
        return self._gone.is_set()

    async def _wait_for_tokens(self) -> None:
        handle = self.job.handle
        await handle.event.wait()
        handle.event.clear()

    async def _finish(self, send: Send, body: bytes, media_type: str, status: int = 200) -> None:
        self._completed = True
        headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", media_type.encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        self.stats.completed += 1

    async def _full(self, send: Send) -> None:
        handle = self.job.handle
        while not handle.done:
            await self._wait_for_tokens()
        if handle.aborted:
            return
        if handle.failed:
            error = engine_dead_error()
            await self._finish(send, orjson.dumps(error.body()), "application/json", 500)
            return
        plan = self.plan
        if plan.stall_after_tokens is not None and await self._sleep(plan.stall_seconds):
            return
        body = self.formatter.body()
        if plan.close_after_tokens is not None:
            self.stats.faults["close_mid_stream"] += 1
            headers = [
                (b"content-length", str(len(body)).encode()),
                (b"content-type", b"application/json"),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send(
                {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
            )
            raise SimulatedConnectionDrop
        await self._finish(send, body, "application/json")

    async def _stream(self, send: Send) -> None:
        start = {"type": "http.response.start", "status": 200, "headers": list(_SSE_HEADERS)}
        await send(start)
        job = self.job
        first = job.choices[0]
        actions = self._stream_faults(send)
        pending = sorted(actions)
        # Like vLLM, the role chunk goes out with the first token, not before prefill ends.
        head = self.formatter.head()
        while True:
            while pending and first.sent >= pending[0]:
                threshold = pending.pop(0)
                if await actions[threshold]():
                    return
            if self._gone.is_set():
                return
            if job.handle.failed:
                await self._end(send, self._stream_error(engine_dead_error()))
                return
            parts = []
            if head and any(c.sequence.emitted for c in job.choices):
                parts.append(head)
                head = b""
            for choice in job.choices:
                end = choice.sequence.emitted
                if choice is first and pending:
                    end = min(end, pending[0])
                if end > choice.sent:
                    parts.append(self.formatter.tokens(choice, choice.sent, end))
                    choice.sent = end
            if parts:
                self.stats.record_token_write(job.options.response_id, time.time())
                await self._body(send, b"".join(parts))
            if not head and all(c.sent >= len(c.output.token_ids) for c in job.choices):
                break
            if not parts:
                await self._wait_for_tokens()
        await self._end(send, self.formatter.closing())

    def _stream_error(self, error: ApiError) -> bytes:
        # An API whose stream ends its own way (Anthropic's `error` event) says how.
        own = getattr(self.formatter, "stream_error", None)
        return own(error) if callable(own) else sse_error(error)

    def _stream_faults(self, send: Send) -> dict[int, Callable[[], Awaitable[bool]]]:
        """Mid-stream faults keyed by the token count after which they strike."""
        plan = self.plan
        actions: dict[int, Callable[[], Awaitable[bool]]] = {}

        async def stall() -> bool:
            self.stats.faults["stall_mid_stream"] += 1
            return await self._sleep(plan.stall_seconds)

        async def error() -> bool:
            self.stats.faults["error"] += 1
            self.engine.abort(self.job.handle)
            await self._end(send, self._stream_error(injected_error(plan.error_status or 500)))
            return True

        async def close() -> bool:
            self.stats.faults["close_mid_stream"] += 1
            self.engine.abort(self.job.handle)
            self._completed = True
            raise SimulatedConnectionDrop

        async def garbage() -> bool:
            self.stats.faults["garbage"] += 1
            self.engine.abort(self.job.handle)
            await self._end(send, GARBAGE)
            return True

        if plan.stall_after_tokens is not None:
            actions[plan.stall_after_tokens] = stall
        if plan.error_status is not None and plan.error_after_tokens is not None:
            actions.setdefault(plan.error_after_tokens, error)
        if plan.garbage_after_tokens is not None:
            actions.setdefault(plan.garbage_after_tokens, garbage)
        if plan.close_after_tokens is not None:
            actions.setdefault(plan.close_after_tokens, close)
        return actions

    async def _body(self, send: Send, data: bytes) -> None:
        await send({"type": "http.response.body", "body": data, "more_body": True})

    async def _end(self, send: Send, data: bytes) -> None:
        self._completed = True
        await send({"type": "http.response.body", "body": data, "more_body": False})
        self.stats.completed += 1
