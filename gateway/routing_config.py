"""How a model's calls are spread over its backends: the `routing` policy and its bounds."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class RoutingPolicy(StrEnum):
    """How a backend is chosen for a call of a model with several."""

    LEAST_IN_FLIGHT = "least_in_flight"
    PREFIX_AFFINITY = "prefix_affinity"


class PrefixAffinityConfig(BaseModel):
    """What `prefix_affinity` reads of a prompt, and when load wins over the cached prefix."""

    model_config = ConfigDict(extra="forbid")

    # Characters of the prompt's leading part (messages or prompt, as sent) that are hashed:
    # the bound on the work a call costs the router, whatever the size of its prompt.
    prefix_chars: int = Field(default=8192, ge=64, le=262_144)
    # The prefix is hashed in blocks of this many characters, each hash covering all before it,
    # so calls sharing only a leading part (a system prompt, a document) still meet.
    block_chars: int = Field(default=512, ge=16, le=65_536)
    # A backend is busy when its load (calls in flight, or the engine's running + waiting
    # requests if more) exceeds the least loaded backend's by more than this.
    load_margin: int = Field(default=1, ge=0, le=100_000)
    # ... or when its scraped KV-cache use is above this fraction.
    max_kv_cache_usage: float = Field(default=0.95, gt=0, le=1)
    # Prefix blocks remembered per model (which backend last took each), oldest dropped first.
    table_entries: int = Field(default=100_000, ge=1, le=10_000_000)
