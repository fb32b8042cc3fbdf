"""Merge the workers' expositions into one: counters and histograms summed, gauges as stated.

Counters and histograms count events of one process each, so the pool's value is the sum (their
`_created` samples: the earliest). A gauge is either a share of the pool's state, summed, or a
figure every worker computes alike from the database or from the backends (stability and eval
gauges, thresholds, engine gauges, backend up), taken once as the maximum so N workers do not
multiply it. `GAUGE_AGGREGATION` names the exceptions to that maximum.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

from prometheus_client.core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

Aggregation = Literal["sum", "max", "min"]
GAUGE_AGGREGATION: dict[str, Aggregation] = {
    # Each worker's share of what is in flight, queued or spooled.
    "plumbline_backend_in_flight": "sum",
    "plumbline_sink_queue_depth": "sum",
    "plumbline_spool_pending_files": "sum",
    "plumbline_event_loop_tasks": "sum",
    "plumbline_key_lookups": "sum",
    "plumbline_shedding_product_in_flight": "sum",
    "plumbline_key_last_used_pending": "sum",
    "process_resident_memory_bytes": "sum",
    "process_virtual_memory_bytes": "sum",
    "process_open_fds": "sum",
    # Up only while every worker's view is up.
    "plumbline_sink_database_up": "min",
    "plumbline_rate_limit_redis_up": "min",
    "process_start_time_seconds": "min",
}
SUMMED_TYPES = frozenset({"counter", "histogram", "summary", "gaugehistogram"})
SeriesKey = tuple[str, tuple[tuple[str, str], ...]]


def _aggregation(family: Metric, sample: Sample) -> Aggregation:
    if sample.name.endswith("_created"):
        return "min"
    if family.type in SUMMED_TYPES:
        return "sum"
    return GAUGE_AGGREGATION.get(family.name, "max")


def _combine(how: Aggregation, old: float, new: float) -> float:
    if how == "sum":
        return old + new
    return max(old, new) if how == "max" else min(old, new)


def parse(exposition: str) -> list[Metric]:
    """The families of one worker's exposition text."""
    return list(text_string_to_metric_families(exposition))


def merge(expositions: Iterable[list[Metric]]) -> list[Metric]:
    """One family per name, each series combined across the workers by its aggregation."""
    families: dict[str, Metric] = {}
    values: dict[str, dict[SeriesKey, float]] = {}
    for worker in expositions:
        for family in worker:
            merged = families.setdefault(
                family.name, Metric(family.name, family.documentation, family.type)
            )
            series = values.setdefault(family.name, {})
            for sample in family.samples:
                key = (sample.name, tuple(sorted(sample.labels.items())))
                if key in series:
                    series[key] = _combine(_aggregation(merged, sample), series[key], sample.value)
                else:
                    series[key] = sample.value
    for name, merged in families.items():
        merged.samples = [
            Sample(sample_name, dict(labels), value)
            for (sample_name, labels), value in values[name].items()
        ]
    return list(families.values())


def calls_served(families: list[Metric]) -> float:
    """The calls one worker counted (its `plumbline_calls_total` over every series)."""
    return sum(
        sample.value
        for family in families
        if family.name == "plumbline_calls"
        for sample in family.samples
        if sample.name == "plumbline_calls_total"
    )


class MergedCollector:
    """Yields already merged families to `generate_latest`."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        """The families."""
        yield from self._families
