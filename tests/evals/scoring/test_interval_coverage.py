"""Coverage of the question-clustered suite interval, by simulation of heterogeneous questions."""

from __future__ import annotations

import numpy as np
import pytest

from evals.alerting import QuestionPopulation, simulate_modal_counts
from evals.scoring import agreement_interval, cluster_bootstrap_estimate

PARAPHRASES, SAMPLES = 20, 5


def _truth(population: QuestionPopulation, rng: np.random.Generator) -> float:
    # The population value of the statistic, from one very large suite.
    counts = simulate_modal_counts(
        population,
        suites=1,
        questions=100_000,
        paraphrases=PARAPHRASES,
        samples=SAMPLES,
        runs=1,
        rng=rng,
    )
    return float(counts.mean()) / (PARAPHRASES * SAMPLES)


@pytest.mark.parametrize("mean_agreement", [0.95, 0.85])
def test_cluster_wilson_covers_about_95_percent(mean_agreement: float) -> None:
    rng = np.random.default_rng(11)
    population = QuestionPopulation(mean_agreement)
    truth = _truth(population, rng)
    counts = simulate_modal_counts(
        population,
        suites=3000,
        questions=200,
        paraphrases=PARAPHRASES,
        samples=SAMPLES,
        runs=1,
        rng=rng,
    )[0].astype(float)
    _, lower, upper = agreement_interval(
        counts, np.full(counts.shape, float(PARAPHRASES * SAMPLES))
    )
    coverage = float(((lower <= truth) & (truth <= upper)).mean())
    upper_misses = float((upper < truth).mean())
    assert 0.93 <= coverage <= 0.97, coverage
    # The upper bound is what pages: it may fall below the truth only about 2.5% of the time.
    assert upper_misses <= 0.04, upper_misses


def test_cluster_bootstrap_covers_roughly_95_percent() -> None:
    rng = np.random.default_rng(12)
    population = QuestionPopulation(0.85)
    truth = _truth(population, rng)
    counts = simulate_modal_counts(
        population,
        suites=400,
        questions=200,
        paraphrases=PARAPHRASES,
        samples=SAMPLES,
        runs=1,
        rng=rng,
    )[0]
    shares = counts / (PARAPHRASES * SAMPLES)
    hits = [
        (e := cluster_bootstrap_estimate(list(row), n_boot=1000, seed=i)).lower <= truth <= e.upper
        for i, row in enumerate(shares)
    ]
    assert 0.91 <= float(np.mean(hits)) <= 0.98


def test_a_naive_pooled_interval_would_undercover() -> None:
    # Why the question must be the unit: treating 20,000 correlated samples as independent fails.
    rng = np.random.default_rng(13)
    population = QuestionPopulation(0.85)
    truth = _truth(population, rng)
    counts = simulate_modal_counts(
        population,
        suites=1000,
        questions=200,
        paraphrases=PARAPHRASES,
        samples=SAMPLES,
        runs=1,
        rng=rng,
    )[0].astype(float)
    p = counts.sum(axis=1) / (200 * PARAPHRASES * SAMPLES)
    half = 1.96 * np.sqrt(p * (1 - p) / (200 * PARAPHRASES * SAMPLES))
    assert float(((p - half <= truth) & (truth <= p + half)).mean()) < 0.5
