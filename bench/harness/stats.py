"""Percentiles, medians and ratios for benchmark samples."""

from __future__ import annotations

import math
import statistics


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, q in 0..1; NaN for no samples."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def median(values: list[float]) -> float:
    """Median of the values that are numbers; NaN when none is."""
    numbers = [v for v in values if not math.isnan(v)]
    return statistics.median(numbers) if numbers else float("nan")


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is 0 or missing."""
    if math.isnan(denominator) or denominator == 0:
        return float("nan")
    return numerator / denominator
