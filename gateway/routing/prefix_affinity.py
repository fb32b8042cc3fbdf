"""Prefix affinity: send a call where its prompt's prefix was sent last, unless that is busy."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from gateway.routing.prefix_blocks import rendezvous_score
from gateway.routing_config import PrefixAffinityConfig

AFFINITY = "affinity"
LOAD_FALLBACK = "load_fallback"


class Loaded(Protocol):
    """What the router reads of a backend."""

    url: str
    in_flight: int
    engine_gauges: dict[str, float]


def load_of(backend: Loaded) -> float:
    """Calls in flight from here, or the engine's running + waiting requests if more (other
    gateways' calls are in those; ours are counted there only once scraped)."""
    gauges = backend.engine_gauges
    engine = gauges.get("running", 0.0) + gauges.get("waiting", 0.0)
    return max(float(backend.in_flight), engine)


B = TypeVar("B", bound=Loaded)


class PrefixAffinity(Generic[B]):
    """Which backend took each prefix block last (bounded), and the choice it leads to."""

    def __init__(self, config: PrefixAffinityConfig) -> None:
        self.config = config
        self._owner: OrderedDict[bytes, str] = OrderedDict()

    def choose(self, candidates: Sequence[B], blocks: Sequence[bytes]) -> tuple[B, str]:
        """The backend for a call with these prefix blocks, and why; `candidates` not empty.

        The table only ever names a URL that is looked up among `candidates` (the model's
        healthy backends), so nothing a client sends can lead outside them.
        """
        affine = self._holder(candidates, blocks)
        least = min(candidates, key=load_of)
        if self._busy(affine, least):
            self._remember(blocks, least.url, overwrite=False)
            return least, LOAD_FALLBACK
        self._remember(blocks, affine.url, overwrite=True)
        return affine, AFFINITY

    def _holder(self, candidates: Sequence[B], blocks: Sequence[bytes]) -> B:
        by_url = {b.url: b for b in candidates}
        holder: B | None = None
        for block in blocks:
            url = self._owner.get(block)
            if url is None:
                break
            found = by_url.get(url)
            if found is not None:
                holder = found
        if holder is not None:
            return holder
        # A prefix seen nowhere (or only on backends gone): rendezvous hashing of its first
        # block, so when a backend leaves only the prefixes it held move.
        key = blocks[0]
        return max(candidates, key=lambda b: rendezvous_score(key, b.url))

    def _busy(self, affine: B, least: B) -> bool:
        if affine is least:
            return False
        if load_of(affine) > load_of(least) + self.config.load_margin:
            return True
        usage = affine.engine_gauges.get("kv_cache_usage", 0.0)
        return usage > self.config.max_kv_cache_usage

    def _remember(self, blocks: Sequence[bytes], url: str, *, overwrite: bool) -> None:
        owner = self._owner
        for block in blocks:
            if overwrite or block not in owner:
                owner[block] = url
            owner.move_to_end(block)
        while len(owner) > self.config.table_entries:
            owner.popitem(last=False)

    def __len__(self) -> int:
        return len(self._owner)
