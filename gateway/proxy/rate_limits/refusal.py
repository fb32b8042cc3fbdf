"""Why a call was refused by a rate limit, and the 429 that says so."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gateway.errors import GatewayError


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
        self.refusal = refusal
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


class LimitsUnavailable(GatewayError):
    """A 503 when limits cannot be checked and the gateway is set to fail closed."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(
            503, "Rate limits cannot be checked right now (their store is unreachable); retry."
        )
        self.headers = ((b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()),)
