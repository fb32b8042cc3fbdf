"""A Prometheus histogram fed in batches: one engine step's latency counted once per sequence."""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily, Metric
from prometheus_client.samples import Sample


class StepHistogram:
    """Exposed like a prometheus_client Histogram (buckets, count, sum, _created)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labels: dict[str, str],
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self._name = name
        self._documentation = documentation
        self._labels = labels
        self._bounds = [*buckets, math.inf]
        self._counts = [0] * len(self._bounds)
        self._sum = 0.0
        self._created = time.time()
        registry.register(self)

    def observe(self, value: float, count: int = 1) -> None:
        """Record `count` observations of `value`."""
        self._counts[bisect.bisect_left(self._bounds, value)] += count
        self._sum += value * count

    def describe(self) -> list[Metric]:
        """Registry hook: the family, without samples."""
        return [HistogramMetricFamily(self._name, self._documentation, labels=list(self._labels))]

    def collect(self) -> Iterator[Metric]:
        """Registry hook: cumulative buckets, sum and creation time."""
        family = HistogramMetricFamily(self._name, self._documentation, labels=list(self._labels))
        cumulative, running = [], 0
        for bound, count in zip(self._bounds, self._counts, strict=True):
            running += count
            cumulative.append((_go_float(bound), float(running)))
        family.add_metric(list(self._labels.values()), cumulative, self._sum)
        family.samples.append(Sample(f"{self._name}_created", self._labels, self._created))
        yield family


def _go_float(bound: float) -> str:
    """Bucket bound as Prometheus writes it ("0.01", "+Inf")."""
    return "+Inf" if math.isinf(bound) else repr(float(bound))
