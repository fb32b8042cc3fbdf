"""A model's load shedding thresholds and the vLLM `priority` the gateway gives each source."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

# vLLM reads `priority` as an int64; the gateway's own values stay far inside it.
MAX_PRIORITY = 1_000_000


class SheddingConfig(BaseModel):
    """When the model's backends count as saturated, and what a shed call is told."""

    model_config = ConfigDict(extra="forbid")

    # A backend is saturated at any of these (None: that signal is not used): requests its
    # engine queues (vllm:num_requests_waiting, kept fresh between scrapes by this process's
    # own calls in flight), the engine's KV cache use, or this process's calls in flight to it.
    queue_depth: int | None = Field(default=16, ge=1, le=1_000_000)
    kv_cache_usage: float | None = Field(default=0.95, gt=0, le=1)
    in_flight: int | None = Field(default=None, ge=1, le=1_000_000)
    # Eval and live-resample calls are shed from this fraction of the thresholds up, so they
    # go first; product calls of teams above their fair share only at the thresholds.
    background_at: float = Field(default=0.75, gt=0, le=1)
    # What a shed call's Retry-After says (about one health interval: the signals' freshness).
    retry_after_s: int = Field(default=5, ge=1, le=3600)
    # A team's share of the model's calls in flight, relative to others (default 1 each).
    team_weights: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_signal(self) -> SheddingConfig:
        if self.queue_depth is None and self.kv_cache_usage is None and self.in_flight is None:
            raise ValueError(
                "shedding needs at least one of queue_depth, kv_cache_usage or in_flight; "
                "remove the shedding section to turn it off"
            )
        if any(not 0 < weight <= 1000 for weight in self.team_weights.values()):
            raise ValueError("shedding.team_weights must each be above 0 and at most 1000")
        return self


class PriorityConfig(BaseModel):
    """vLLM `priority` per call source (larger runs later), on priority-scheduled models."""

    model_config = ConfigDict(extra="forbid")

    product: int = Field(default=0, ge=0, le=MAX_PRIORITY)
    eval: int = Field(default=10, ge=0, le=MAX_PRIORITY)
    live_sample: int = Field(default=10, ge=0, le=MAX_PRIORITY)
    # Added to a product call of a team above its fair share (with shedding configured).
    over_share: int = Field(default=1, ge=0, le=MAX_PRIORITY)

    def of(self, source: str) -> int:
        """The priority of a call of `source` (an unknown source counts as product)."""
        if source == "eval":
            return self.eval
        if source == "live_sample":
            return self.live_sample
        return self.product
