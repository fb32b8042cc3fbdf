"""ProcessLimits: eval concurrency bounds shared by every thread and event loop of one process.

The embedded worker (memory broker, thread pool) runs each task under its own event loop, so
asyncio semaphores cannot bound it as a whole; these counters, behind a lock, can.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ProcessLimits:
    """`SampleLimits` for one process: per-suite and per-model slots across all its threads."""

    def __init__(self, per_suite: int, per_backend: int, poll_s: float = 0.02) -> None:
        self.per_suite = per_suite
        self.per_backend = per_backend
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._in_use: dict[str, int] = {}

    @asynccontextmanager
    async def slot(self, suite: str, model: str) -> AsyncIterator[None]:
        """Hold one suite slot, then one backend slot, for the duration of a call."""
        async with (
            self.lease("suite", suite, self.per_suite),
            self.lease("backend", model, self.per_backend),
        ):
            yield

    @asynccontextmanager
    async def lease(self, kind: str, name: str, limit: int) -> AsyncIterator[None]:
        """Hold one of `limit` slots of a named bound, waiting for a free one."""
        key = f"{kind}:{name}"
        while not self._take(key, limit):
            await asyncio.sleep(self.poll_s)
        try:
            yield
        finally:
            with self._lock:
                self._in_use[key] -= 1

    def held(self, kind: str, name: str) -> int:
        """Slots of a bound in use now."""
        with self._lock:
            return self._in_use.get(f"{kind}:{name}", 0)

    def _take(self, key: str, limit: int) -> bool:
        with self._lock:
            if self._in_use.get(key, 0) >= limit:
                return False
            self._in_use[key] = self._in_use.get(key, 0) + 1
            return True
