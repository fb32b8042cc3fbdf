"""RateLimiter: admits calls against their key's and team's buckets, and settles their tokens.

Requests and the tokens a call may generate are taken at admission; once the call's usage is
known the difference is charged or handed back. With the Redis store a failing or slow Redis
(every command bounded by `redis_timeout_s`) means either this process's own buckets (fail
open) or a 503 (fail closed), per `on_redis_failure`; then Redis is left alone for
`redis_retry_s`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from redis.exceptions import RedisError

from gateway.auth.keys import KeyInfo
from gateway.proxy.rate_limits.buckets import NO_GRANT, Grant, Take, takes_of
from gateway.proxy.rate_limits.memory import MemoryBuckets
from gateway.proxy.rate_limits.redis_buckets import RedisBuckets
from gateway.proxy.rate_limits.refusal import LimitsUnavailable, RateLimitExceeded
from gateway.rate_limit_config import RateLimitConfig

log = logging.getLogger(__name__)
# What a Redis command may raise: its own errors, a socket's, or our deadline.
STORE_ERRORS = (RedisError, OSError, TimeoutError)


def _token_takes(takes: tuple[Take, ...]) -> tuple[Take, ...]:
    return tuple(take for take in takes if take.unit == "tokens")


def shared_grant(takes: tuple[Take, ...]) -> Grant:
    """What a call took once Redis admitted it: its token buckets, settled there."""
    return Grant(_token_takes(takes), "redis")


class RateLimiter:
    """The one limiter of a gateway process: memory only, or Redis with a fallback."""

    def __init__(
        self,
        config: RateLimitConfig,
        shared: RedisBuckets | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.shared = shared
        self.local = MemoryBuckets(clock)
        self._clock = clock
        self._skip_until = 0.0
        self.counts = {"timeout": 0, "error": 0, "failed_open": 0, "failed_closed": 0}
        self.settlements_lost = 0

    async def admit(self, info: KeyInfo, reserve: int) -> Grant:
        """Take a request and `reserve` tokens from every bucket of `info`, or raise a 429/503."""
        takes = takes_of(info, reserve)
        if not takes:
            return NO_GRANT
        if self.shared is not None and self.shared_ready():
            try:
                async with asyncio.timeout(self.config.redis_timeout_s):
                    refusal = await self.shared.take(takes)
            except STORE_ERRORS as error:
                self.store_failed(error)
            else:
                if refusal is not None:
                    raise RateLimitExceeded(refusal)
                return shared_grant(takes)
        return self.unshared_admit(takes)

    def shared_ready(self) -> bool:
        """Whether admission asks Redis now: a Redis store, not skipped after a failure."""
        return self.shared is not None and self._clock() >= self._skip_until

    def store_failed(self, error: BaseException) -> None:
        """Count a failed admission command and leave Redis alone for `redis_retry_s`."""
        self._failed(error, "admission")

    def unshared_admit(self, takes: tuple[Take, ...]) -> Grant:
        """Admission without Redis: this process's buckets, or a 503 if the store fails closed."""
        if self.shared is not None:
            if self.config.on_redis_failure == "closed":
                self.counts["failed_closed"] += 1
                raise LimitsUnavailable(max(self._skip_until - self._clock(), 1.0))
            self.counts["failed_open"] += 1
        refusal = self.local.take(takes)
        if refusal is not None:
            raise RateLimitExceeded(refusal)
        return Grant(_token_takes(takes), "memory")

    async def settle(self, grant: Grant, used: int) -> None:
        """Charge a finished call's real tokens against what it reserved (never raises)."""
        owed = grant.owed(used)
        if not owed:
            return
        if grant.store == "memory" or self.shared is None:
            self.local.settle(owed)
            return
        try:
            async with asyncio.timeout(self.config.redis_timeout_s):
                await self.shared.settle(owed)
        except STORE_ERRORS as error:
            self.settlement_lost(error)

    def settlement_lost(self, error: BaseException) -> None:
        """Count a settlement that did not reach Redis."""
        # The reservation stands: a refund is lost, an extra charge is not made.
        self._failed(error, "settlement")
        self.settlements_lost += 1

    def _failed(self, error: BaseException, step: str) -> None:
        timed_out = isinstance(error, TimeoutError)
        self.counts["timeout" if timed_out else "error"] += 1
        if self._clock() >= self._skip_until:
            # One line per outage window, not per call; never the URL (it may hold a password).
            log.warning(
                "rate limit store failed at %s (%s); %s for %.1f s",
                step,
                type(error).__name__,
                "admitting by local limits"
                if self.config.on_redis_failure == "open"
                else "refusing calls",
                self.config.redis_retry_s,
            )
        self._skip_until = self._clock() + self.config.redis_retry_s

    def metric_families(self) -> Iterator[Metric]:
        """The limiter's counters for /metrics."""
        failures = CounterMetricFamily(
            "plumbline_rate_limit_redis_failures",
            "Redis commands of the rate limits that failed, by reason",
            labels=["reason"],
        )
        for reason in ("timeout", "error"):
            failures.add_metric([reason], self.counts[reason])
        unchecked = CounterMetricFamily(
            "plumbline_rate_limit_unshared_admissions",
            "Calls admitted by local limits (open) or refused with a 503 (closed) without Redis",
            labels=["mode"],
        )
        for mode in ("open", "closed"):
            unchecked.add_metric([mode], self.counts[f"failed_{mode}"])
        lost = CounterMetricFamily(
            "plumbline_rate_limit_settlements_lost",
            "Token settlements (refunds or extra charges) that could not reach Redis",
        )
        lost.add_metric([], self.settlements_lost)
        up = GaugeMetricFamily(
            "plumbline_rate_limit_redis_up",
            "1 while the Redis store answers (0 while it is skipped after a failure)",
        )
        up.add_metric([], 1.0 if self._clock() >= self._skip_until else 0.0)
        yield from (failures, unchecked, lost)
        if self.shared is not None:
            yield up

    async def aclose(self) -> None:
        """Close the Redis connections, if any."""
        if self.shared is not None:
            await self.shared.aclose()
