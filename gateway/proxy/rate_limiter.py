"""Per-key and per-team rate limits as in-memory token buckets (no database or Redis per call).

Requests are taken from a bucket when a call is admitted. Tokens are not known until the call
ends, so a call is admitted while its token buckets are not in debt and its real usage is
charged afterwards; a large call can push a bucket into debt, which later calls wait out.
Each gateway replica holds its own buckets: with N replicas, configure
`limits.rate_limit_replicas: N` and each enforces a share of every limit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.auth.keys import KeyInfo
from gateway.errors import GatewayError


class TokenBucket:
    """Holds up to one minute's allowance and refills continuously."""

    __slots__ = ("capacity", "level", "limit", "rate", "stamp")

    def __init__(self, per_minute: float, now: float) -> None:
        self.limit = per_minute
        # A replica's share of a small limit may be under one request: still allow one.
        self.capacity = max(per_minute, 1.0)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float, per_minute: float) -> None:
        """Bring the level up to `now`, following a changed limit."""
        if per_minute != self.limit:
            self.limit, self.capacity = per_minute, max(per_minute, 1.0)
            self.level = min(self.level, self.capacity)
            self.rate = per_minute / 60.0
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until the level reaches `amount` (0 when it already has)."""
        return max(0.0, (amount - self.level) / self.rate)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call was refused and when it may be retried."""

    unit: str  # "requests" or "tokens"
    scope: str  # "key" or "team"
    limit: int
    retry_after_s: float


class RateLimitExceeded(GatewayError):
    """A 429 in OpenAI's shape, with Retry-After and the limit that was hit."""

    def __init__(self, refusal: Refusal) -> None:
        wait = refusal.retry_after_s
        super().__init__(
            429,
            f"Rate limit reached for {refusal.unit} per minute on this {refusal.scope} "
            f"(limit {refusal.limit}). Please try again in {wait:.1f}s.",
        )
        self.headers = (
            (b"retry-after", str(max(1, math.ceil(wait))).encode()),
            (b"retry-after-ms", str(max(1, math.ceil(wait * 1000))).encode()),
            (f"x-ratelimit-limit-{refusal.unit}".encode(), str(refusal.limit).encode()),
        )


BucketKey = tuple[str, str, int]  # (scope, unit, id)


class RateLimiter:
    """Admits calls and charges their tokens against the key's and the team's buckets."""

    def __init__(self, replicas: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        self._share = 1.0 / replicas
        self._clock = clock
        self._buckets: dict[BucketKey, TokenBucket] = {}

    def _limits(self, info: KeyInfo, unit: str) -> list[tuple[BucketKey, int]]:
        pairs = (
            [("key", info.key_requests_per_minute), ("team", info.requests_per_minute)]
            if unit == "requests"
            else [("key", info.key_tokens_per_minute), ("team", info.tokens_per_minute)]
        )
        owner = {"key": info.key_id, "team": info.team_id}
        return [((scope, unit, owner[scope]), limit) for scope, limit in pairs if limit]

    def _bucket(self, key: BucketKey, limit: int, now: float) -> TokenBucket:
        per_minute = limit * self._share
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(per_minute, now)
        else:
            bucket.refill(now, per_minute)
        return bucket

    def admit(self, info: KeyInfo) -> Refusal | None:
        """Take one request from each request bucket, unless a bucket says wait."""
        now = self._clock()
        taken: list[TokenBucket] = []
        worst: Refusal | None = None
        for key, limit in self._limits(info, "requests"):
            bucket = self._bucket(key, limit, now)
            if bucket.level < 1:
                worst = _worse(worst, Refusal(key[1], key[0], limit, bucket.wait_for(1)))
            taken.append(bucket)
        for key, limit in self._limits(info, "tokens"):
            bucket = self._bucket(key, limit, now)
            if bucket.level <= 0:
                # Any positive level will do: the call's own size is charged when it ends.
                wait = bucket.wait_for(min(1.0, bucket.capacity))
                worst = _worse(worst, Refusal(key[1], key[0], limit, wait))
        if worst is not None:
            return worst
        for bucket in taken:
            bucket.level -= 1
        return None

    def charge_tokens(self, info: KeyInfo, tokens: int) -> None:
        """Charge a finished call's tokens (prompt and completion) to its token buckets."""
        if tokens <= 0:
            return
        now = self._clock()
        for key, limit in self._limits(info, "tokens"):
            bucket = self._bucket(key, limit, now)
            # Debt is bounded by one minute's allowance, so one huge call cannot lock a key out.
            bucket.level = max(-bucket.capacity, bucket.level - tokens)


def _worse(current: Refusal | None, new: Refusal) -> Refusal:
    return new if current is None or new.retry_after_s > current.retry_after_s else current
