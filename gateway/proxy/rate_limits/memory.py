"""Token buckets in this process's memory: the single-process store, and Redis's fallback."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from gateway.proxy.rate_limits.buckets import Take
from gateway.proxy.rate_limits.refusal import Refusal

BucketKey = tuple[str, str, int]  # (scope, unit, owner)


class TokenBucket:
    """Holds up to one minute's allowance, refills continuously, may owe up to as much."""

    __slots__ = ("capacity", "level", "limit", "rate", "stamp")

    def __init__(self, per_minute: int, now: float) -> None:
        self.limit = per_minute
        self.capacity = float(max(per_minute, 1))
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float, per_minute: int) -> None:
        """Bring the level up to `now`, following a changed limit."""
        if per_minute != self.limit:
            self.limit, self.capacity = per_minute, float(max(per_minute, 1))
            self.level = min(self.level, self.capacity)
            self.rate = per_minute / 60.0
        self.level = min(self.capacity, self.level + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now

    def refusal_wait(self, amount: int) -> float | None:
        """Seconds until `amount` may be taken, or None when it may be now."""
        if self.level >= amount and self.level > 0:
            return None
        # A reservation of nothing still needs a bucket that is not in debt.
        target = max(float(amount), min(1.0, self.capacity))
        return (target - self.level) / self.rate

    def settle(self, owed: int) -> None:
        """Charge `owed` more (or hand back a negative one), within one minute either way."""
        self.level = min(self.capacity, max(-self.capacity, self.level - owed))


class MemoryBuckets:
    """Every bucket this process has seen, by key or team and unit."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[BucketKey, TokenBucket] = {}

    def _bucket(self, take: Take, now: float) -> TokenBucket:
        key = (take.scope, take.unit, take.owner)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(take.limit, now)
        else:
            bucket.refill(now, take.limit)
        return bucket

    def take(self, takes: Sequence[Take]) -> Refusal | None:
        """Take every amount, or none of them and say which bucket makes the call wait longest."""
        now = self._clock()
        buckets = [self._bucket(take, now) for take in takes]
        worst: Refusal | None = None
        for take, bucket in zip(takes, buckets, strict=True):
            wait = bucket.refusal_wait(take.amount)
            if wait is not None and (worst is None or wait > worst.retry_after_s):
                worst = Refusal(take.unit, take.scope, take.limit, wait)
        if worst is None:
            for take, bucket in zip(takes, buckets, strict=True):
                bucket.level -= take.amount
        return worst

    def settle(self, owed: dict[Take, int]) -> None:
        """Charge (or hand back) what each token bucket is still owed."""
        now = self._clock()
        for take, amount in owed.items():
            self._bucket(take, now).settle(amount)
