"""Reuse the output of deterministic requests: same seed (or greedy), same prompt, same output.

A load test sends the same seeded request thousands of times; generating 200 tokens with top-k
logprobs costs milliseconds of CPU each time, which would make the stand-in for a GPU the
bottleneck of the very benchmarks it serves. The result is identical either way.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from simulator.generation import GeneratedOutput
from simulator.sampling import GREEDY_BELOW, SamplingSettings

MAX_ENTRIES = 256


def is_deterministic(settings: SamplingSettings) -> bool:
    """True when the sampler is fixed by the request alone."""
    return settings.seed is not None or settings.temperature < GREEDY_BELOW


class GenerationCache:
    """A bounded LRU of generated outputs of deterministic requests."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: OrderedDict[Hashable, GeneratedOutput] = OrderedDict()
        self._max = max_entries

    def get_or_generate(
        self, key: Hashable, generate: Callable[[], GeneratedOutput]
    ) -> GeneratedOutput:
        """The cached output for `key`, generating (and keeping) it on a miss."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        output = self._entries[key] = generate()
        if len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return output

    def clear(self) -> None:
        """Forget everything (the scenarios changed)."""
        self._entries.clear()
