"""Prefix caching by full blocks, never the whole prompt, with LRU eviction."""

from __future__ import annotations

from simulator.prefix_cache import PrefixCache, block_hashes


def test_hits_come_in_whole_blocks() -> None:
    cache = PrefixCache(block_size=4, num_blocks=100)
    prompt = list(range(10))
    assert cache.lookup_and_insert(block_hashes(prompt, 4), len(prompt)) == 0
    assert cache.lookup_and_insert(block_hashes(prompt, 4), len(prompt)) == 8
    longer = [*prompt, 50, 51, 52, 53]
    assert cache.lookup_and_insert(block_hashes(longer, 4), len(longer)) == 8


def test_a_fully_cached_prompt_still_computes_its_last_block() -> None:
    cache = PrefixCache(block_size=4, num_blocks=100)
    prompt = list(range(8))
    cache.lookup_and_insert(block_hashes(prompt, 4), 8)
    assert cache.lookup_and_insert(block_hashes(prompt, 4), 8) == 4


def test_a_different_first_block_misses_everything() -> None:
    cache = PrefixCache(block_size=4, num_blocks=100)
    cache.lookup_and_insert(block_hashes(list(range(12)), 4), 12)
    other = [99, *range(1, 12)]
    assert cache.lookup_and_insert(block_hashes(other, 4), 12) == 0


def test_least_recently_used_blocks_are_evicted() -> None:
    cache = PrefixCache(block_size=2, num_blocks=2)
    first, second = [1, 2, 3, 4, 0], [5, 6, 7, 8, 0]
    cache.lookup_and_insert(block_hashes(first, 2), 5)
    cache.lookup_and_insert(block_hashes(second, 2), 5)
    assert len(cache) == 2
    assert cache.lookup_and_insert(block_hashes(first, 2), 5) == 0


def test_disabled_cache_never_hits() -> None:
    cache = PrefixCache(block_size=2, num_blocks=10, enabled=False)
    prompt = [1, 2, 3, 4, 5]
    cache.lookup_and_insert(block_hashes(prompt, 2), 5)
    assert cache.lookup_and_insert(block_hashes(prompt, 2), 5) == 0


def test_a_cache_salt_separates_every_block_as_in_vllm() -> None:
    cache = PrefixCache(block_size=4, num_blocks=16)
    prompt = list(range(12))
    cache.lookup_and_insert(block_hashes(prompt, 4, "team-a"), len(prompt))
    assert cache.lookup_and_insert(block_hashes(prompt, 4, "team-b"), len(prompt)) == 0
    assert cache.lookup_and_insert(block_hashes(prompt, 4), len(prompt)) == 0
    assert cache.lookup_and_insert(block_hashes(prompt, 4, "team-a"), len(prompt)) == 8
