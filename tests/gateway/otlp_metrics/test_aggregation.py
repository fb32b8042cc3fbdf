"""Explicit-bucket histograms: bucket edges, cumulative and delta collections, the overflow set."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gateway.otlp_metrics.aggregation import OVERFLOW, MetricAggregator
from gateway.otlp_metrics.instruments import (
    INSTRUMENTS,
    OPERATION_DURATION,
    TIME_PER_OUTPUT_TOKEN,
    TIME_TO_FIRST_TOKEN,
    TOKEN_USAGE,
)
from gateway.otlp_metrics.measurements import Attributes

A: Attributes = (("gen_ai.operation.name", "chat"),)
B: Attributes = (("gen_ai.operation.name", "embeddings"),)


def _clock() -> Callable[[], int]:
    ticks = iter(range(1_000, 10**9, 1_000))
    return lambda: next(ticks)


def test_the_conventions_bucket_boundaries() -> None:
    assert TOKEN_USAGE.unit == "{token}"
    assert TOKEN_USAGE.bounds == tuple(float(4**p) for p in range(14))
    assert OPERATION_DURATION.unit == "s"
    assert OPERATION_DURATION.bounds[0] == 0.01 and OPERATION_DURATION.bounds[-1] == 81.92
    assert len(OPERATION_DURATION.bounds) == 14
    assert TIME_TO_FIRST_TOKEN.bounds[:3] == (0.001, 0.005, 0.01)
    assert TIME_TO_FIRST_TOKEN.bounds[-1] == 10.0 and len(TIME_TO_FIRST_TOKEN.bounds) == 16
    assert TIME_PER_OUTPUT_TOKEN.bounds[0] == 0.01 and TIME_PER_OUTPUT_TOKEN.bounds[-1] == 2.5
    assert len(TIME_PER_OUTPUT_TOKEN.bounds) == 13
    for instrument in INSTRUMENTS:
        assert list(instrument.bounds) == sorted(set(instrument.bounds))


def test_a_value_on_a_boundary_falls_in_the_bucket_it_closes() -> None:
    aggregator = MetricAggregator(INSTRUMENTS, 10)
    for value in (0.0, 1.0, 1.5, 4.0, 67108864.0, 67108865.0):
        aggregator.record(TOKEN_USAGE, A, value)
    [(_, point)] = aggregator.collect().points[TOKEN_USAGE]
    # Buckets: (-inf, 1], (1, 4], (4, 16], ..., (16777216, 67108864], (67108864, +inf).
    assert point.buckets[0] == 2 and point.buckets[1] == 2
    assert point.buckets[-2] == 1 and point.buckets[-1] == 1
    assert point.count == 6 and point.total == pytest.approx(134217739.5)
    assert (point.low, point.high) == (0.0, 67108865.0)


def test_cumulative_points_keep_growing_from_one_start() -> None:
    aggregator = MetricAggregator(INSTRUMENTS, 10, clock=_clock())
    aggregator.record(OPERATION_DURATION, A, 0.3)
    first = aggregator.collect()
    aggregator.record(OPERATION_DURATION, A, 0.5)
    second = aggregator.collect()
    assert first.start_ns == second.start_ns < first.time_ns < second.time_ns
    assert first.points[OPERATION_DURATION][0][1].count == 1
    [(_, point)] = second.points[OPERATION_DURATION]
    assert point.count == 2 and point.total == pytest.approx(0.8)
    # A collection is a copy: later measurements do not change what was collected.
    assert first.points[OPERATION_DURATION][0][1].count == 1


def test_delta_points_cover_one_period_each_and_an_idle_period_is_empty() -> None:
    aggregator = MetricAggregator(INSTRUMENTS, 10, delta=True, clock=_clock())
    aggregator.record(OPERATION_DURATION, A, 0.3)
    first = aggregator.collect()
    aggregator.record(OPERATION_DURATION, A, 0.5)
    second = aggregator.collect()
    assert second.start_ns == first.time_ns
    assert second.points[OPERATION_DURATION][0][1].total == 0.5
    assert len(aggregator.collect()) == 0


def test_past_the_limit_measurements_go_to_the_overflow_set_and_are_counted() -> None:
    aggregator = MetricAggregator(INSTRUMENTS, 3)
    for index in range(10):
        aggregator.record(TOKEN_USAGE, (("n", index),), 1.0)
    aggregator.record(TOKEN_USAGE, (("n", 0),), 1.0)
    points = dict(aggregator.collect().points[TOKEN_USAGE])
    # The overflow set is one of the three: two sets of their own, then the overflow.
    assert set(points) == {(("n", 0),), (("n", 1),), OVERFLOW}
    assert points[(("n", 0),)].count == 2 and points[OVERFLOW].count == 8
    assert aggregator.overflowed == 8
    # The limit is per instrument.
    aggregator.record(OPERATION_DURATION, B, 1.0)
    assert aggregator.overflowed == 8


def test_delta_frees_the_sets_each_period() -> None:
    aggregator = MetricAggregator(INSTRUMENTS, 3, delta=True)
    for index in range(2):
        aggregator.record(TOKEN_USAGE, (("n", index),), 1.0)
    aggregator.collect()
    aggregator.record(TOKEN_USAGE, (("n", 5),), 1.0)
    assert dict(aggregator.collect().points[TOKEN_USAGE]).keys() == {(("n", 5),)}
    assert aggregator.overflowed == 0
