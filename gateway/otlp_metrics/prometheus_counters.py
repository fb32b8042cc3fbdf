"""The OTLP metric exporter's counters, as Prometheus families for the gateway's /metrics."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, Metric

from gateway.recording.sink_stats import SinkStats


def metric_export_counters(stats: SinkStats) -> Iterator[Metric]:
    """Exports by outcome, and measurements past the attribute-set limit."""
    exports = CounterMetricFamily(
        "plumbline_otlp_metric_exports",
        "OTLP metric export requests: accepted by the collector, or failed after their tries",
        labels=["outcome"],
    )
    exports.add_metric(["exported"], stats.metric_exported)
    exports.add_metric(["failed"], stats.metric_export_failed)
    overflow = CounterMetricFamily(
        "plumbline_otlp_metric_overflow",
        "GenAI measurements recorded in the otel.metric.overflow=true series (attribute-set limit)",
    )
    overflow.add_metric([], stats.metric_overflowed)
    yield from (exports, overflow)
