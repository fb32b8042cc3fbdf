"""Bounds on eval samples in flight: per suite, and per model's backends across all suites."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol
from weakref import WeakKeyDictionary

Gates = dict[tuple[str, str], asyncio.Semaphore]


class SampleLimits(Protocol):
    """What the execution unit needs: one slot per call, per suite and per model's backends.

    `ConcurrencyLimits` bounds one event loop; `workers.redis_limits.RedisLimits` bounds every
    worker process at once (the same interface on a Redis lease semaphore).
    """

    def slot(self, suite: str, model: str) -> AbstractAsyncContextManager[None]:
        """Hold a suite slot and a backend slot for the duration of one call."""
        ...


class ConcurrencyLimits:
    """Semaphores keyed by suite and by model, per event loop.

    The per-model bound is what keeps evals from starving production traffic: whatever the
    number of suites running on a loop, at most `per_backend` eval calls reach the backends
    serving a model. Semaphores cannot cross event loops, so each loop gets its own set (a
    process running one loop, like the gateway or the CLI, is bounded as a whole).
    """

    def __init__(self, per_suite: int, per_backend: int) -> None:
        self.per_suite = per_suite
        self.per_backend = per_backend
        self._loops: WeakKeyDictionary[asyncio.AbstractEventLoop, Gates] = WeakKeyDictionary()

    def _gate(self, kind: str, name: str) -> asyncio.Semaphore:
        gates = self._loops.setdefault(asyncio.get_running_loop(), {})
        size = self.per_suite if kind == "suite" else self.per_backend
        return gates.setdefault((kind, name), asyncio.Semaphore(size))

    @asynccontextmanager
    async def slot(self, suite: str, model: str) -> AsyncIterator[None]:
        """Hold one suite slot, then one backend slot, for the duration of a call."""
        # Suite first: a suite waiting for its own slots never holds a shared backend slot.
        async with self._gate("suite", suite), self._gate("backend", model):
            yield

    def in_flight(self, model: str) -> int:
        """Eval calls holding a backend slot of `model` on the running loop."""
        gate = self._gate("backend", model)
        return self.per_backend - gate._value
