"""Temperature, top-k, top-p and seeds at the answer and token level."""

from __future__ import annotations

import math
import random

import pytest

from simulator.sampling import SamplingSettings, choice_rng, choose_weighted, cumulative_weights

PROBS = [0.46, 0.41, 0.13]


def _spread(cumulative: list[float]) -> list[float]:
    return [b - a for a, b in zip([0.0, *cumulative[:-1]], cumulative, strict=True)]


def test_temperature_zero_is_greedy() -> None:
    assert cumulative_weights(PROBS, 0.0, 1.0, 0) == [1.0]
    settings = SamplingSettings(temperature=0.0)
    picks = {choose_weighted([0.13, 0.46, 0.41], settings, random.Random(i)) for i in range(50)}
    assert picks == {1}


def test_temperature_one_keeps_probabilities() -> None:
    assert _spread(cumulative_weights(PROBS, 1.0, 1.0, 0)) == pytest.approx(PROBS)


def test_temperature_sharpens_as_p_to_the_one_over_t() -> None:
    squared = [p**2 for p in PROBS]
    expected = [p / sum(squared) for p in squared]
    assert _spread(cumulative_weights(PROBS, 0.5, 1.0, 0)) == pytest.approx(expected)


def test_top_p_and_top_k_truncate() -> None:
    assert len(cumulative_weights(PROBS, 1.0, 0.5, 0)) == 2
    assert len(cumulative_weights(PROBS, 1.0, 0.4, 0)) == 1
    top_two = _spread(cumulative_weights(PROBS, 1.0, 1.0, 2))
    assert top_two == pytest.approx([0.46 / 0.87, 0.41 / 0.87])


def test_frequencies_follow_weights() -> None:
    rng = random.Random(1234)
    settings = SamplingSettings()
    draws = 6000
    counts = [0, 0, 0]
    for _ in range(draws):
        counts[choose_weighted(PROBS, settings, rng)] += 1
    for count, p in zip(counts, PROBS, strict=True):
        sigma = math.sqrt(p * (1 - p) / draws)
        assert abs(count / draws - p) < 5 * sigma


def test_seeded_generators_repeat_per_seed_and_choice() -> None:
    seeded = SamplingSettings(seed=42)
    first = [choice_rng(seeded, 0, 99).random() for _ in range(2)]
    assert first[0] == first[1]
    assert choice_rng(seeded, 1, 99).random() != first[0]
    assert choice_rng(SamplingSettings(seed=43), 0, 99).random() != first[0]
