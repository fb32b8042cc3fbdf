"""RedisLimits: eval concurrency bounds that hold across every worker process, in Redis.

Each bound is a sorted set of lease tokens scored by their expiry (Redis server time, so worker
clocks do not matter). A Lua script drops expired tokens and adds as many of ours as the set has
room for below the limit, atomically. Holders renew their tokens every third of the lease; a
worker that dies stops renewing, and its slots come back once the lease runs out.

Within a process, the waiters of a bound queue locally and one task asks Redis for all of them
at once (`workers.lease_grants`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from workers.lease_grants import LeaseGrants

log = logging.getLogger(__name__)

_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
# ARGV: limit, lease ms, then tokens; adds the first tokens the bound has room for.
ACQUIRE = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local room = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local granted = 0
for i = 3, #ARGV do
  if granted >= room then break end
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[i])
  granted = granted + 1
end
if granted > 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return granted
"""
)
RENEW = (
    _NOW_MS
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
  return 1
end
return 0
"""
)
COUNT = (
    _NOW_MS
    + """
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""
)


def _reconnecting() -> Retry:
    """Three more tries on a fresh connection, 50 ms to 1 s apart."""
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=3)


class RedisLimits:
    """`SampleLimits` on Redis: per-suite and per-model slots shared by all workers."""

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str,
        per_suite: int,
        per_backend: int,
        lease_s: float = 60.0,
        poll_s: float = 0.025,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.per_suite = per_suite
        self.per_backend = per_backend
        self.lease_ms = max(1, int(lease_s * 1000))
        self.poll_s = poll_s
        self._acquire: Any = redis.register_script(ACQUIRE)
        self._renew: Any = redis.register_script(RENEW)
        self._count: Any = redis.register_script(COUNT)
        self._held: dict[str, str] = {}
        self._grants: dict[str, LeaseGrants] = {}
        self._renewer: asyncio.Task[None] | None = None

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, url: str, *, prefix: str, per_suite: int, per_backend: int, lease_s: float = 60.0
    ) -> AsyncIterator[RedisLimits]:
        """Limits on a new Redis connection of the running loop; closed (slots freed) on exit."""
        # A pooled connection that Redis closed (a restart) fails its next command, and
        # `from_url` retries nothing: each stale connection used to fail one eval batch.
        redis = Redis.from_url(
            url, retry=_reconnecting(), retry_on_error=[RedisConnectionError, RedisTimeoutError]
        )
        limits = cls(
            redis, prefix=prefix, per_suite=per_suite, per_backend=per_backend, lease_s=lease_s
        )
        try:
            yield limits
        finally:
            await limits.aclose()

    def key(self, kind: str, name: str) -> str:
        """The Redis key of one bound."""
        return f"{self.prefix}limits:{kind}:{name}"

    @asynccontextmanager
    async def slot(self, suite: str, model: str) -> AsyncIterator[None]:
        """Hold one suite slot, then one backend slot, for the duration of a call."""
        # Suite first: a suite waiting for its own slots never holds a shared backend slot.
        async with (
            self.lease("suite", suite, self.per_suite),
            self.lease("backend", model, self.per_backend),
        ):
            yield

    @asynccontextmanager
    async def lease(self, kind: str, name: str, limit: int) -> AsyncIterator[None]:
        """Hold one of `limit` slots of a named bound, waiting for a free one."""
        key = self.key(kind, name)
        grants = self._grants.get(key)
        if grants is None:
            acquire, release = partial(self._acquire_many, key, limit), partial(self._release, key)
            grants = self._grants[key] = LeaseGrants(acquire, release, limit, self.poll_s)
        token = await grants.wait()
        self._held[token] = key
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew_forever())
        try:
            yield
        finally:
            self._held.pop(token, None)
            try:
                await asyncio.shield(self._release(key, token))
            finally:
                grants.freed()

    async def held(self, kind: str, name: str) -> int:
        """Unexpired slots of a bound, across all workers."""
        return int(await self._count(keys=[self.key(kind, name)]))

    async def aclose(self) -> None:
        """Stop renewing, release whatever is still held, close the connection."""
        for grants in self._grants.values():
            grants.close()
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        for token, key in list(self._held.items()):
            await self.redis.zrem(key, token)
        self._held.clear()
        await self.redis.aclose()

    async def _acquire_many(self, key: str, limit: int, tokens: list[str]) -> int:
        return int(await self._acquire(keys=[key], args=[limit, self.lease_ms, *tokens]))

    async def _release(self, key: str, token: str) -> None:
        await self.redis.zrem(key, token)

    async def _renew_forever(self) -> None:
        while self._held:
            await asyncio.sleep(self.lease_ms / 3000)
            for token, key in list(self._held.items()):
                if not await self._renew(keys=[key], args=[self.lease_ms, token]):
                    # Stalled past the lease (a frozen process): the slot went to someone else.
                    log.warning("lost concurrency slot %s of %s; lease too short?", token, key)
