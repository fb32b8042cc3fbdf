"""Automatic prefix caching by full blocks of prompt tokens, with LRU eviction."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence


def block_hashes(
    token_ids: Sequence[int], block_size: int, cache_salt: str | None = None
) -> list[int]:
    """Chained hashes of the prompt's full blocks: a block's hash covers everything before it.

    A `cache_salt` enters the first block's hash, as in vLLM, so it separates every block.
    """
    hashes: list[int] = []
    previous = 0
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        block = tuple(token_ids[start : start + block_size])
        salted = start == 0 and cache_salt is not None
        previous = hash((previous, block, cache_salt) if salted else (previous, block))
        hashes.append(previous)
    return hashes


class PrefixCache:
    """Which prompt blocks are resident; a hit is the longest run of leading resident blocks."""

    def __init__(self, block_size: int, num_blocks: int, enabled: bool = True) -> None:
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.enabled = enabled
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def lookup_and_insert(self, hashes: Sequence[int], prompt_len: int) -> int:
        """Cached tokens of a prompt (never all: one must be computed); then store its blocks."""
        if not self.enabled:
            return 0
        hits = 0
        for block in hashes:
            if block not in self._blocks:
                break
            self._blocks.move_to_end(block)
            hits += 1
        if hits and hits * self.block_size >= prompt_len:
            hits -= 1
        for block in hashes[hits:]:
            self._blocks[block] = None
            self._blocks.move_to_end(block)
        while len(self._blocks) > self.num_blocks:
            self._blocks.popitem(last=False)
        return hits * self.block_size

    def clear(self) -> None:
        """Forget every block (vLLM's /reset_prefix_cache)."""
        self._blocks.clear()

    def __len__(self) -> int:
        return len(self._blocks)
