"""EvalLoop: one event loop per worker process, on its own thread, shared by every eval task.

A task that ran `asyncio.run` per batch built a new gateway client (an SSL context and fresh
connections) and a new Redis connection each time, and its limits' local queues died with the
loop. Here they live as long as the process: tasks hand their coroutine to the loop and wait.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger(__name__)


class EvalLoop(Generic[R]):
    """A daemon thread running one asyncio loop, and the resources opened on it once."""

    def __init__(self, open_resources: Callable[[AsyncExitStack], Awaitable[R]]) -> None:
        self._open = open_resources
        self._exits = AsyncExitStack()
        self._resources: asyncio.Future[R] | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="plumbline-eval-loop", daemon=True
        )
        self._thread.start()

    def run(self, work: Callable[[R], Awaitable[T]]) -> T:
        """Call `work(resources)` on the loop and wait for its result (from another thread)."""
        future = asyncio.run_coroutine_threadsafe(self._call(work), self._loop)
        try:
            return future.result()
        except BaseException:
            # The waiting thread is going away (a shutdown, a time limit): so is its work.
            future.cancel()
            raise

    def close(self, timeout_s: float = 10.0) -> None:
        """Close the resources (freeing held slots), then stop the loop and its thread."""
        if not self._thread.is_alive():
            return
        closing = asyncio.run_coroutine_threadsafe(self._exits.aclose(), self._loop)
        try:
            closing.result(timeout_s)
        except Exception as error:
            # Called as the process exits: slots not freed here run out with their lease.
            log.warning("eval loop closed uncleanly: %r", error)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)

    async def _call(self, work: Callable[[R], Awaitable[T]]) -> T:
        return await work(await self._ready())

    async def _ready(self) -> R:
        found = self._resources
        # A failed opening (no API key, Redis away) is retried by the next task, not cached.
        if found is None or (found.done() and (found.cancelled() or found.exception())):
            found = self._resources = asyncio.ensure_future(self._opened())
        return await asyncio.shield(found)

    async def _opened(self) -> R:
        exits = AsyncExitStack()
        try:
            resources = await self._open(exits)
        except BaseException:
            await exits.aclose()
            raise
        self._exits = exits
        return resources
