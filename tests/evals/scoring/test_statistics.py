"""Agreement statistics against known values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evals.scoring import (
    cluster_entropy,
    cluster_wilson_estimate,
    modal_share,
    normalised_entropy,
    paired_t_test,
    pairwise_agreement,
    wilson_interval,
)
from evals.scoring.student_t import t_cdf, t_quantile, two_sided_p


@pytest.mark.parametrize(
    ("successes", "n", "lower", "upper"),
    [
        (5, 5, 0.566, 1.000),
        (19, 20, 0.764, 0.991),
        (95, 100, 0.888, 0.978),
        (190, 200, 0.910, 0.973),
        (950, 1000, 0.935, 0.962),
    ],
)
def test_wilson_matches_the_background_figures(
    successes: int, n: int, lower: float, upper: float
) -> None:
    estimate = wilson_interval(successes, n)
    assert (round(estimate.lower, 3), round(estimate.upper, 3)) == (lower, upper)
    assert estimate.point == successes / n


def test_cluster_statistics() -> None:
    counts = [6, 3, 1]
    assert modal_share(counts) == 0.6
    assert pairwise_agreement(counts) == pytest.approx((30 + 6 + 0) / 90)
    assert cluster_entropy(counts) == pytest.approx(
        -(0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1))
    )
    assert normalised_entropy(counts) == pytest.approx(cluster_entropy(counts) / math.log(10))
    assert normalised_entropy([5]) == 0.0
    assert normalised_entropy([1] * 5) == pytest.approx(1.0)
    assert math.isnan(pairwise_agreement([1]))


def test_student_t_against_tabulated_values() -> None:
    assert t_quantile(0.975, 9) == pytest.approx(2.262157, abs=1e-6)
    assert t_quantile(0.975, 199) == pytest.approx(1.971957, abs=1e-6)
    assert t_quantile(0.995, 3) == pytest.approx(5.840909, abs=1e-6)
    assert two_sided_p(2.0, 10) == pytest.approx(0.0733880, abs=1e-7)
    assert t_cdf(0.0, 5) == pytest.approx(0.5)


def test_suite_interval_is_never_narrower_than_the_pooled_samples() -> None:
    one = cluster_wilson_estimate([5], [5])
    assert (round(one.lower, 3), one.upper, one.method) == (0.566, 1.0, "wilson")
    all_agree = cluster_wilson_estimate([5] * 3, [5] * 3)
    pooled = wilson_interval(15, 15)
    assert all_agree.lower <= pooled.lower
    assert all_agree.upper == 1.0
    mixed = cluster_wilson_estimate([100, 90, 60, 100], [100] * 4)
    assert mixed.method == "cluster_wilson"
    assert mixed.lower < wilson_interval(350, 400).lower


def test_paired_t_test() -> None:
    test = paired_t_test([0.1, 0.2, 0.3, 0.4])
    assert test.delta == pytest.approx(0.25)
    se = np.std([0.1, 0.2, 0.3, 0.4], ddof=1) / 2
    assert test.upper - test.delta == pytest.approx(t_quantile(0.975, 3) * se)
    assert test.p_value == pytest.approx(two_sided_p(0.25 / se, 3))
    unchanged = paired_t_test([0.0, 0.0, 0.0])
    assert (unchanged.delta, unchanged.p_value) == (0.0, 1.0)
