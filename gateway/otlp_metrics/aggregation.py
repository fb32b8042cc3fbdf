"""Explicit-bucket histograms per attribute set, bounded per instrument, cumulative or delta.

`record` is called by the recorder's journal thread and `collect` by the export thread; one
lock guards both, held only for a dict update or a copy, never across an export.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gateway.otlp_metrics.instruments import Instrument
from gateway.otlp_metrics.measurements import Attributes

# The SDK specification's attribute set for measurements past the cardinality limit.
OVERFLOW: Attributes = (("otel.metric.overflow", True),)


@dataclass(slots=True)
class HistogramPoint:
    """One attribute set's count, sum, min, max and bucket counts."""

    buckets: list[int]
    count: int = 0
    total: float = 0.0
    low: float = float("inf")
    high: float = float("-inf")

    def add(self, value: float, bounds: tuple[float, ...]) -> None:
        """Count `value` in the bucket (bounds[i-1], bounds[i]] it falls in."""
        self.buckets[bisect_left(bounds, value)] += 1
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def copy(self) -> HistogramPoint:
        """An independent copy (for a cumulative collection)."""
        return HistogramPoint(list(self.buckets), self.count, self.total, self.low, self.high)


@dataclass(frozen=True, slots=True)
class Collection:
    """What one collection read: the period it covers and each instrument's points."""

    start_ns: int
    time_ns: int
    points: dict[Instrument, list[tuple[Attributes, HistogramPoint]]] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(points) for points in self.points.values())


class MetricAggregator:
    """Histograms of each instrument by attribute set, at most `limit` sets per instrument."""

    def __init__(
        self,
        instruments: Iterable[Instrument],
        limit: int,
        *,
        delta: bool = False,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        if limit < 2:
            raise ValueError("the cardinality limit must leave room for the overflow set")
        self._instruments = tuple(instruments)
        self._limit = limit
        self._delta = delta
        self._clock = clock
        self._lock = threading.Lock()
        self._series: dict[Instrument, dict[Attributes, HistogramPoint]] = {
            instrument: {} for instrument in self._instruments
        }
        self._start_ns = clock()
        # Measurements recorded in the overflow set, since start.
        self.overflowed = 0

    def record(self, instrument: Instrument, attributes: Attributes, value: float) -> None:
        """Add one measurement."""
        with self._lock:
            series = self._series[instrument]
            point = series.get(attributes)
            if point is None:
                # The overflow set is one of the `limit` sets (the SDK specification's rule).
                if len(series) - (OVERFLOW in series) >= self._limit - 1:
                    attributes = OVERFLOW
                    point = series.get(OVERFLOW)
                if point is None:
                    point = series[attributes] = HistogramPoint([0] * (len(instrument.bounds) + 1))
            if attributes == OVERFLOW:
                self.overflowed += 1
            point.add(value, instrument.bounds)

    def collect(self) -> Collection:
        """The points to export now: all since start (cumulative) or since the last collection."""
        with self._lock:
            now = self._clock()
            start = self._start_ns
            if self._delta:
                points = {i: list(series.items()) for i, series in self._series.items()}
                self._series = {instrument: {} for instrument in self._instruments}
                self._start_ns = now
            else:
                points = {
                    i: [(key, point.copy()) for key, point in series.items()]
                    for i, series in self._series.items()
                }
        return Collection(start, now, {i: p for i, p in points.items() if p})
