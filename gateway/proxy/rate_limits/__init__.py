"""Per-key and per-team request and token limits, in memory or shared through Redis."""

from gateway.proxy.rate_limits.buckets import Grant, reserved_tokens
from gateway.proxy.rate_limits.limiter import RateLimiter
from gateway.proxy.rate_limits.refusal import LimitsUnavailable, RateLimitExceeded, Refusal

__all__ = [
    "Grant",
    "LimitsUnavailable",
    "RateLimitExceeded",
    "RateLimiter",
    "Refusal",
    "reserved_tokens",
]
