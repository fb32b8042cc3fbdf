"""Histogram percentiles against numpy's, and how a window is split into rollups and raw calls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from gateway.usage import latency_histogram
from gateway.usage.window_plan import plan_window

T0 = datetime(2026, 11, 20, tzinfo=UTC)
H = timedelta(hours=1)


@pytest.mark.parametrize("scale", [0.05, 3.0, 250.0, 40_000.0])
def test_percentiles_from_the_histogram_are_within_one_bucket(scale: float) -> None:
    rng = np.random.default_rng(7)
    values = rng.lognormal(mean=np.log(scale), sigma=0.6, size=5000)
    histogram = latency_histogram.empty()
    np.add.at(histogram, latency_histogram.bucket_of(values), 1)
    for q in (0.5, 0.95, 0.99):
        estimate = latency_histogram.percentile(histogram, q)
        exact = float(np.percentile(values, q * 100))
        assert estimate is not None
        floor = latency_histogram.BASE_MS  # below it everything shares the first bucket
        assert abs(estimate - exact) <= max(exact * (latency_histogram.GROWTH - 1), floor)


def test_histograms_survive_storage_and_merge() -> None:
    first, second = latency_histogram.empty(), latency_histogram.empty()
    first[[3, 40, 339]] = [1, 70_000, 2]
    second[[40, 41]] = [5, 6]
    merged = latency_histogram.decode(latency_histogram.encode(first))
    merged += latency_histogram.decode(latency_histogram.encode(second))
    assert merged[40] == 70_005 and merged[41] == 6 and merged.sum() == 70_014
    assert latency_histogram.percentile(latency_histogram.empty(), 0.5) is None
    assert latency_histogram.decode(latency_histogram.encode(latency_histogram.empty())).sum() == 0


def test_a_window_uses_whole_days_then_whole_hours_then_raw_edges() -> None:
    days = {(24, T0 + timedelta(days=d)) for d in range(1, 3)}
    hours = {(1, T0 + H * h) for h in range(0, 96)}
    since = T0 + timedelta(hours=22, minutes=30)
    until = T0 + timedelta(days=3, hours=2, minutes=15)
    plan = plan_window(since, until, days | hours)
    assert plan.periods == [
        (1, T0 + H * 23),
        (24, T0 + timedelta(days=1)),
        (24, T0 + timedelta(days=2)),
        (1, T0 + timedelta(days=3)),
        (1, T0 + timedelta(days=3, hours=1)),
    ]
    assert plan.raw == [
        (since, T0 + H * 23),
        (T0 + timedelta(days=3, hours=2), until),
    ]


def test_gaps_in_the_rollups_are_read_raw_and_joined() -> None:
    clean = {(1, T0), (1, T0 + 3 * H)}  # hours 1 and 2 missing or dirty
    plan = plan_window(T0, T0 + 4 * H, clean)
    assert plan.periods == [(1, T0), (1, T0 + 3 * H)]
    assert plan.raw == [(T0 + H, T0 + 3 * H)]
    assert plan_window(T0, T0 + 4 * H, set()).raw == [(T0, T0 + 4 * H)]


def test_a_window_of_millennia_walks_the_rollups_not_the_hours() -> None:
    since = datetime(29, 4, 27, tzinfo=UTC)
    until = datetime(7251, 7, 6, tzinfo=UTC)
    plan = plan_window(since, until, {(24, T0), (1, T0 + 25 * H)})
    assert plan.periods == [(24, T0), (1, T0 + 25 * H)]
    assert plan.raw == [(since, T0), (T0 + 24 * H, T0 + 25 * H), (T0 + 26 * H, until)]
