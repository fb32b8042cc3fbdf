"""SendWatchdog: notices a client that stopped reading a stream, with one timer per stream."""

from __future__ import annotations

import asyncio


class SendWatchdog:
    """Fires `guard` once a single send to the client has waited `limit` seconds."""

    __slots__ = ("_guard", "_limit", "_loop", "_since", "_timer", "fired")

    def __init__(self, guard: asyncio.Timeout, limit: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._guard = guard
        self._limit = limit
        self._since: float | None = None
        self.fired = False
        # One timer for the whole stream, moved only when it fires: a chunk costs a clock read.
        self._timer = self._loop.call_later(limit, self._check)

    def sending(self) -> None:
        """A send to the client begins."""
        self._since = self._loop.time()

    def sent(self) -> None:
        """The client took it."""
        self._since = None

    def stop(self) -> None:
        """The stream is over."""
        self._timer.cancel()

    def _check(self) -> None:
        since = self._since
        now = self._loop.time()
        if since is not None and now - since >= self._limit:
            self.fired = True
            # The guard's timeout cancels the blocked send, which the relay reads as a stall.
            self._guard.reschedule(now)
            return
        start = since if since is not None else now
        self._timer = self._loop.call_at(start + self._limit, self._check)
