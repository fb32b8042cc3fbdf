"""The gateway's /metrics as numbers: sink outcomes, database state, in-flight gauges."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

SINK_OUTCOMES = ("submitted", "journaled", "written", "spooled", "replayed", "dropped")


def scrape(base_url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample of the gateway's /metrics, by sample name."""
    response = httpx.get(f"{base_url}/metrics", timeout=10)
    response.raise_for_status()
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def total(
    samples: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str
) -> float:
    """The sum of a sample's values over the series matching `labels`."""
    return sum(
        value
        for series, value in samples.get(name, [])
        if all(series.get(k) == v for k, v in labels.items())
    )


def sink_state(base_url: str) -> dict[str, float]:
    """Sink counters by outcome, plus `database_up`, `queue_depth` and `pending_files`."""
    samples = scrape(base_url)
    state = {
        outcome: total(samples, "plumbline_sink_records_total", outcome=outcome)
        for outcome in SINK_OUTCOMES
    }
    state["database_up"] = total(samples, "plumbline_sink_database_up")
    state["queue_depth"] = total(samples, "plumbline_sink_queue_depth")
    state["pending_files"] = total(samples, "plumbline_spool_pending_files")
    return state
