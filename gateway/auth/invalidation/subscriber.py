"""InvalidationSubscriber: hears committed key changes on Redis and drops them from the key cache.

The subscription counts as live only while Redis has answered within the bound (a PING every
`heartbeat_s` on the subscribed connection): a connection that died silently is noticed within
the bound like one that was closed. Each (re)subscription flushes the whole cache first, since
messages published while no subscription was live are lost (pub/sub keeps nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from gateway.auth.invalidation.changes import decode_change
from gateway.auth.key_cache import KeyCache

log = logging.getLogger(__name__)
OUTCOMES = ("applied", "flushed", "unreadable")
EVENTS = ("subscribed", "lost", "failed")


class ChannelSilentError(ConnectionError):
    """Redis did not answer on the subscribed connection within the bound."""


class InvalidationSubscriber:
    """One subscription per gateway process, reconnecting until stopped."""

    def __init__(
        self, url: str, channel: str, cache: KeyCache, bound_s: float, heartbeat_s: float
    ) -> None:
        self.url = url
        self.channel = channel
        self.cache = cache
        self.bound_s = bound_s
        self.heartbeat_s = heartbeat_s
        self._subscribed = False
        self._last_heard = -math.inf
        self._task: asyncio.Task[None] | None = None
        # Invalidations by outcome; channel events: subscribed, lost (a live one ended), failed.
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.events = dict.fromkeys(EVENTS, 0)

    def confirmed(self, now: float) -> bool:
        """Subscribed, and Redis answered on the subscription within the bound of `now`."""
        return self._subscribed and now - self._last_heard < self.bound_s

    def start(self) -> None:
        """Subscribe in the background (the cache trusts verdicts only for the bound until then)."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Unsubscribe and stop reconnecting."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._subscribed = False

    async def _run(self) -> None:
        while True:
            try:
                await self._listen()
            except Exception as error:  # any failure of Redis or its socket: reconnect
                log.warning("key invalidation channel down (%s); reconnecting", error)
            self.events["lost" if self._subscribed else "failed"] += 1
            self._subscribed = False
            await asyncio.sleep(self.heartbeat_s)

    async def _listen(self) -> None:
        client = Redis.from_url(
            self.url,
            socket_timeout=self.bound_s,
            socket_connect_timeout=self.bound_s,
            retry=Retry(NoBackoff(), 0),  # a fresh connection flushes the cache: no silent retry
        )
        pubsub = client.pubsub()
        try:
            await self._serve(pubsub)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis 8.2
            with contextlib.suppress(Exception):
                await client.aclose()

    async def _serve(self, pubsub: PubSub) -> None:
        began = time.monotonic()
        await pubsub.subscribe(self.channel)
        next_ping = began + self.heartbeat_s
        while True:
            now = time.monotonic()
            if self._subscribed and now >= next_ping:
                await pubsub.ping()
                next_ping = now + self.heartbeat_s
            message = await pubsub.get_message(timeout=max(0.0, next_ping - now))
            if message is not None:
                self._heard(message)
            heard = self._last_heard if self._subscribed else began
            if time.monotonic() - heard >= self.bound_s:
                raise ChannelSilentError(f"no answer from Redis within {self.bound_s} s")

    def _heard(self, message: dict[str, Any]) -> None:
        self._last_heard = time.monotonic()
        kind = message["type"]
        if kind == "subscribe":
            # Changes published while no subscription was live were missed: trust nothing held.
            self.cache.forget_all()
            self.outcomes["flushed"] += 1
            self.events["subscribed"] += 1
            self._subscribed = True
        elif kind == "message":
            change = decode_change(message["data"])
            if change is None:
                self.cache.forget_all()  # perhaps a newer release's message: drop everything
                self.outcomes["unreadable"] += 1
            else:
                self.cache.forget(change)
                self.outcomes["applied"] += 1
