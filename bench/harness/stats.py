"""Percentiles and medians for benchmark samples."""

from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, q in 0..1; NaN for no samples."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def median(values: list[float]) -> float:
    """Median, NaN for no samples."""
    return statistics.median(values) if values else float("nan")
