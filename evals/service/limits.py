"""Bounds on eval samples in flight: per suite, and per model's backends across all suites."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ConcurrencyLimits:
    """Semaphores keyed by suite and by model, created on first use (one event loop only).

    The per-model bound is what keeps evals from starving production traffic: whatever the
    number of suites running, at most `per_backend` eval calls reach a model's backend pool.
    """

    def __init__(self, per_suite: int, per_backend: int) -> None:
        self.per_suite = per_suite
        self.per_backend = per_backend
        self._suites: dict[str, asyncio.Semaphore] = {}
        self._backends: dict[str, asyncio.Semaphore] = {}

    @asynccontextmanager
    async def slot(self, suite: str, model: str) -> AsyncIterator[None]:
        """Hold one suite slot, then one backend slot, for the duration of a call."""
        suite_gate = self._suites.setdefault(suite, asyncio.Semaphore(self.per_suite))
        backend_gate = self._backends.setdefault(model, asyncio.Semaphore(self.per_backend))
        # Suite first: a suite waiting for its own slots never holds a shared backend slot.
        async with suite_gate, backend_gate:
            yield

    def in_flight(self, model: str) -> int:
        """Eval calls currently holding a backend slot of `model`."""
        gate = self._backends.get(model)
        return 0 if gate is None else self.per_backend - gate._value
