"""Sampling settings and draws: temperature (p^(1/T) renormalised), top-k, top-p and seeds."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

_MASK64 = (1 << 64) - 1
GREEDY_BELOW = 1e-5  # vLLM samples greedily below this temperature


@dataclass(frozen=True, slots=True)
class SamplingSettings:
    """What one request asks of the sampler; `top_logprobs` None means no logprobs at all."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    max_tokens: int = 16
    min_tokens: int = 0
    stop: tuple[str, ...] = ()
    stop_token_ids: frozenset[int] = field(default_factory=frozenset)
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    top_logprobs: int | None = None


def mix64(value: int) -> int:
    """SplitMix64 finaliser: a cheap, well-spread 64-bit hash of an integer."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def choice_rng(settings: SamplingSettings, index: int, prompt_key: int) -> random.Random:
    """Generator for one choice: fixed by (seed, choice index, prompt) when seeded, else fresh."""
    if settings.temperature < GREEDY_BELOW:
        return random.Random(prompt_key)
    if settings.seed is not None:
        return random.Random(mix64(mix64(settings.seed & _MASK64) ^ index) ^ prompt_key)
    return random.Random()


def cumulative_weights(
    probs: Sequence[float], temperature: float, top_p: float, top_k: int
) -> list[float]:
    """Cumulative sampling weights over `probs` (sorted most likely first) after T, top-k, top-p."""
    if temperature < GREEDY_BELOW or len(probs) == 1:
        return [1.0]
    kept = probs[:top_k] if top_k > 0 else probs
    logs = [math.log(p) / temperature if p > 0 else -math.inf for p in kept]
    peak = max(logs)
    weights = [math.exp(v - peak) for v in logs]
    total = sum(weights)
    cumulative: list[float] = []
    running = 0.0
    for weight in weights:
        running += weight / total
        cumulative.append(running)
        if running >= top_p:
            break
    return cumulative


def draw(cumulative: list[float], rng: random.Random) -> int:
    """Index drawn from a cumulative table (the last entry need not be exactly 1)."""
    if len(cumulative) == 1:
        return 0
    index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return min(index, len(cumulative) - 1)


def choose_weighted(
    weights: Sequence[float], settings: SamplingSettings, rng: random.Random
) -> int:
    """Pick an index of `weights` (any order); temperature 0 takes the first largest."""
    order = sorted(range(len(weights)), key=lambda i: -weights[i])
    total = sum(weights)
    probs = [weights[i] / total for i in order]
    cumulative = cumulative_weights(probs, settings.temperature, settings.top_p, settings.top_k)
    return order[draw(cumulative, rng)]
