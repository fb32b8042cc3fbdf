"""LeaseGrants: a process's waiters for one Redis bound, granted slots in arrival order.

One task per bound asks Redis for as many slots as there are waiters, in one script call: a
batch's fifty calls starting at once cost one round trip, not fifty, and a process never polls
Redis with more than one request per bound. It asks again at once when a slot of this process
is released, and every `poll_s` (jittered) for slots freed by other processes or lapsed leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from itertools import islice

log = logging.getLogger(__name__)

# Given new tokens, adds as many as the bound has room for; returns how many (the first n).
Acquire = Callable[[list[str]], Awaitable[int]]
Release = Callable[[str], Awaitable[None]]


class LeaseGrants:
    """Waiters of one bound in this process, and the one task that asks Redis for them."""

    def __init__(self, acquire: Acquire, release: Release, limit: int, poll_s: float) -> None:
        self._acquire = acquire
        self._release = release
        self.limit = limit
        self.poll_s = poll_s
        self._waiters: deque[asyncio.Future[str]] = deque()
        self._freed = asyncio.Event()
        self._granter: asyncio.Task[None] | None = None

    async def wait(self) -> str:
        """The token of a granted slot; waiters are served in arrival order."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        if self._granter is None or self._granter.done():
            self._granter = asyncio.create_task(self._grant_while_waited())
        try:
            return await future
        except asyncio.CancelledError:
            # Granted just as the waiter was cancelled: the slot goes straight back.
            if future.done() and not future.cancelled():
                await self._give_back(future.result())
            raise

    def freed(self) -> None:
        """A slot of this process was released: ask for the next waiters at once."""
        self._freed.set()

    def close(self) -> None:
        """Stop asking; whoever still waits is cancelled."""
        if self._granter is not None:
            self._granter.cancel()
        for future in self._waiters:
            future.cancel()
        self._waiters.clear()

    async def _grant_while_waited(self) -> None:
        while waiting := self._pending():
            self._freed.clear()
            tokens = [uuid.uuid4().hex for _ in waiting]
            try:
                granted = await self._acquire(tokens)
            except Exception as error:
                # Redis is away: each waiter fails as its own request would have.
                for future in self._waiters:
                    if not future.done():
                        future.set_exception(error)
                return
            for future, token in zip(waiting[:granted], tokens, strict=False):
                if future.done():
                    await self._give_back(token)  # cancelled while we asked
                else:
                    future.set_result(token)
            if granted < len(waiting):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_s * (0.5 + random.random())):
                        await self._freed.wait()

    def _pending(self) -> list[asyncio.Future[str]]:
        # Granted and cancelled waiters leave the queue; at most `limit` are asked for at once.
        self._waiters = deque(future for future in self._waiters if not future.done())
        return list(islice(self._waiters, self.limit))

    async def _give_back(self, token: str) -> None:
        try:
            await asyncio.shield(self._release(token))
        except Exception as error:
            # Left to its lease, which runs out unrenewed.
            log.warning("cannot release an unused slot: %r", error)
        self._freed.set()
