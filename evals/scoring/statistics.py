"""Agreement statistics: modal share, pairwise agreement, cluster entropy and their intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from evals.scoring.student_t import t_quantile, two_sided_p

FloatArray = npt.NDArray[np.float64]


class Bound(StrEnum):
    """Which end of an interval a rule reads."""

    LOWER = "lower"
    POINT = "point"
    UPPER = "upper"


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its confidence interval and how the interval was made."""

    point: float
    lower: float
    upper: float
    method: str

    def bound(self, which: Bound) -> float:
        """The lower bound, the point or the upper bound."""
        return {Bound.LOWER: self.lower, Bound.POINT: self.point, Bound.UPPER: self.upper}[which]


def z_value(confidence: float) -> float:
    """The two-sided normal critical value for a confidence level."""
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Estimate:
    """Wilson score interval of a binomial proportion (sane at 0/n and n/n)."""
    if n <= 0:
        return Estimate(math.nan, 0.0, 1.0, "wilson")
    lower, upper = wilson_bounds(np.array([successes], float), np.array([n], float), confidence)
    return Estimate(successes / n, float(lower[0]), float(upper[0]), "wilson")


def wilson_bounds(
    successes: FloatArray, n: FloatArray, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Vectorised Wilson bounds for arrays of counts."""
    return _wilson_with(successes / n, n, z_value(confidence))


def modal_share(counts: Sequence[int]) -> float:
    """Share of answers in the largest cluster (majority vote's share): "agreement"."""
    total = sum(counts)
    return max(counts) / total if total else math.nan


def pairwise_agreement(counts: Sequence[int]) -> float:
    """Probability that two distinct answers drawn without replacement agree."""
    total = sum(counts)
    if total < 2:
        return math.nan
    return sum(c * (c - 1) for c in counts) / (total * (total - 1))


def cluster_entropy(counts: Sequence[int]) -> float:
    """Discrete semantic entropy in nats: -sum p ln p over answer clusters."""
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in counts if c > 0) if total else math.nan


def normalised_entropy(counts: Sequence[int]) -> float:
    """Entropy over ln(number of answers): 0 when all agree, 1 when all differ."""
    total = sum(counts)
    return cluster_entropy(counts) / math.log(total) if total > 1 else 0.0


def agreement_interval(
    modal_counts: FloatArray, totals: FloatArray, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean of per-question modal shares with a question-clustered interval (last axis = questions).

    A Wilson interval on the mean with the effective sample size of a clustered design
    (Korn & Graubard): n_eff = p (1 - p) / Var(mean), where Var(mean) is the cluster-robust
    variance s^2 / Q over questions, capped at the number of samples (design effect >= 1) and with
    t(Q - 1) as the critical value. Wilson's asymmetry keeps coverage near nominal for the skewed
    shares of stable suites, where a symmetric t interval undercovers; the cap means a handful of
    agreeing samples never proves 100%. With one question it is that question's Wilson interval.
    """
    shares = modal_counts / totals
    q = shares.shape[-1]
    point = shares.mean(axis=-1)
    n_total = totals.sum(axis=-1)
    if q < 2:
        lower, upper = wilson_bounds(modal_counts.sum(axis=-1), n_total, confidence)
        return point, lower, upper
    variance = shares.var(axis=-1, ddof=1) / q
    binomial = point * (1.0 - point)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(variance > 0, binomial / variance, n_total)
    n_eff = np.clip(n_eff, 1.0, n_total)
    critical = t_quantile(1.0 - (1.0 - confidence) / 2.0, q - 1)
    lower, upper = _wilson_with(point, n_eff, critical)
    return point, lower, upper


def _wilson_with(p: FloatArray, n: FloatArray, z: float) -> tuple[FloatArray, FloatArray]:
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z * np.sqrt(np.maximum(p * (1.0 - p) / n + z * z / (4.0 * n * n), 0.0)) / denominator
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def cluster_wilson_estimate(
    modal_counts: Sequence[int], totals: Sequence[int], confidence: float = 0.95
) -> Estimate:
    """`agreement_interval` for one run, as an Estimate."""
    point, lower, upper = agreement_interval(
        np.asarray(modal_counts, float), np.asarray(totals, float), confidence
    )
    method = "cluster_wilson" if len(totals) > 1 else "wilson"
    return Estimate(float(point), float(lower), float(upper), method)


def cluster_bootstrap_estimate(
    shares: Sequence[float], confidence: float = 0.95, n_boot: int = 4000, seed: int = 0
) -> Estimate:
    """Mean of per-question shares with a percentile bootstrap that resamples whole questions."""
    values = np.asarray(shares, float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    alpha = 1.0 - confidence
    lower, upper = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return Estimate(float(values.mean()), float(lower), float(upper), "cluster_bootstrap")


@dataclass(frozen=True, slots=True)
class PairedTest:
    """Mean paired difference with its t interval and two-sided p-value."""

    delta: float
    lower: float
    upper: float
    p_value: float
    n: int


def paired_t_test(differences: Sequence[float], confidence: float = 0.95) -> PairedTest:
    """Paired t test on per-question differences (the question is the unit)."""
    d = np.asarray(differences, float)
    n = d.size
    if n == 0:
        return PairedTest(math.nan, math.nan, math.nan, math.nan, 0)
    delta = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0 or n < 2:
        # No spread: every question moved by exactly delta (often 0: all still agree fully).
        return PairedTest(delta, delta, delta, 1.0 if delta == 0.0 else 0.0, n)
    se = sd / math.sqrt(n)
    half = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * se
    lower, upper = max(-1.0, delta - half), min(1.0, delta + half)
    return PairedTest(delta, lower, upper, two_sided_p(delta / se, n - 1), n)
