"""`limits.budgets`: how spend budgets are reserved, shared and announced."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class BudgetConfig(BaseModel):
    """Budgets live where the rate limits do (`limits.rate_limits.store`), in the same Redis."""

    model_config = ConfigDict(extra="forbid")

    # Off: budgets set on teams and keys are shown but never enforced.
    enabled: bool = True
    # open: admit by this process's own spend (each replica the whole budget) while Redis
    # fails; closed: refuse calls of keys with budgets with a 503 until it answers again.
    on_redis_failure: Literal["open", "closed"] = "open"
    # The prompt's tokens are reserved as the request body's bytes divided by this. 1 never
    # under-reserves a byte-level tokenizer's prompt (a hard budget is then never passed);
    # about 4 reserves a typical English prompt's tokens, so budgets fill closer to the limit.
    body_bytes_per_prompt_token: float = Field(default=1.0, ge=1.0, le=16.0)
    # A settlement runs after the answer was sent, so it may wait longer than an admission
    # (`rate_limits.redis_timeout_s`): one lost leaves its hold charged for the whole period.
    settle_timeout_s: float = Field(default=2.0, gt=0, le=30)
    # Channels (names under `worker.notify.channels`) the soft-level notice goes to; None:
    # `worker.notify.default_channels`.
    notify_channels: list[str] | None = None
    # Attempts to deliver one notice (2 s, 4 s ... apart) before it is given up and logged.
    notify_attempts: int = Field(default=3, ge=1, le=10)
