"""Where the gateway keeps its rate limits, and what it does when that store fails."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class RateLimitConfig(BaseModel):
    """`limits.rate_limits`: in this process's memory, or in Redis shared by every replica."""

    model_config = ConfigDict(extra="forbid")

    # memory: each process holds its own buckets (one gateway process, the embedded demo).
    # redis: buckets in Redis at PLUMBLINE_REDIS__URL, shared by every process and replica.
    store: Literal["memory", "redis"] = "memory"
    # Every Redis command of a call is abandoned after this long (then `on_redis_failure`).
    redis_timeout_s: float = Field(default=0.1, gt=0, le=10)
    # open: admit by this process's own in-memory buckets (each replica the full limit);
    # closed: refuse the call with a 503 until Redis answers again.
    on_redis_failure: Literal["open", "closed"] = "open"
    # After a failure Redis is not asked again for this long, so an outage costs each call
    # nothing rather than a timeout.
    redis_retry_s: float = Field(default=1.0, ge=0, le=300)
    # Connections to Redis per process; a call finding none free counts as a failure.
    max_redis_connections: int = Field(default=64, ge=1, le=10_000)
    # Tokens reserved per choice for a generating call that sets no max_tokens (vLLM then
    # generates up to the context length, which the gateway does not know); settled later.
    assumed_max_tokens: int = Field(default=4096, ge=0, le=10_000_000)
