"""The pool's /metrics from real worker expositions: summed, aggregated, unreachable reported."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.parser import text_string_to_metric_families

from gateway.worker_pool.exposition_socket import ExpositionServer
from gateway.worker_pool.pool_metrics import pool_exposition
from gateway.worker_pool.slot import WorkerSlot

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _registry(
    calls: int, in_flight: float, threshold: float, database_up: float
) -> CollectorRegistry:
    registry = CollectorRegistry()
    counter = Counter("plumbline_calls", "Calls", ["model"], registry=registry)
    counter.labels("tiny").inc(calls)
    histogram = Histogram("plumbline_e2e_seconds", "E2E", buckets=(0.1, 1.0), registry=registry)
    for _ in range(calls):
        histogram.observe(0.5)
    Gauge("plumbline_backend_in_flight", "In flight", registry=registry).set(in_flight)
    Gauge("plumbline_eval_threshold", "Threshold", registry=registry).set(threshold)
    Gauge("plumbline_sink_database_up", "Up", registry=registry).set(database_up)
    return registry


def _samples(exposition: bytes) -> Samples:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exposition.decode())
        for s in family.samples
    }


@pytest.fixture
def sibling(tmp_path: Path) -> Iterator[WorkerSlot]:
    """Worker 0 of 2, whose sibling (worker 1) serves its exposition on its socket."""
    slot = WorkerSlot(0, 2, tmp_path, tmp_path / "spool")
    server = ExpositionServer(slot.exposition_socket(1), _registry(5, 2.0, 0.8, 0.0))
    server.start()
    try:
        yield slot
    finally:
        server.stop()


def test_counters_and_histograms_are_summed_and_each_gauge_aggregated_as_stated(
    sibling: WorkerSlot,
) -> None:
    merged = _samples(pool_exposition(sibling, _registry(3, 1.0, 0.8, 1.0)))
    assert merged[("plumbline_calls_total", (("model", "tiny"),))] == 8
    assert merged[("plumbline_e2e_seconds_count", ())] == 8
    assert merged[("plumbline_e2e_seconds_bucket", (("le", "1.0"),))] == 8
    assert merged[("plumbline_e2e_seconds_bucket", (("le", "0.1"),))] == 0
    assert merged[("plumbline_e2e_seconds_sum", ())] == 4.0
    assert merged[("plumbline_backend_in_flight", ())] == 3.0  # each worker's share: summed
    assert merged[("plumbline_eval_threshold", ())] == 0.8  # the same in each: once, not 1.6
    assert merged[("plumbline_sink_database_up", ())] == 0.0  # up only if up in every worker
    assert merged[("plumbline_gateway_workers", (("state", "scraped"),))] == 2
    assert merged[("plumbline_gateway_workers", (("state", "unreachable"),))] == 0
    assert merged[("plumbline_gateway_worker_calls", (("worker", "0"),))] == 3
    assert merged[("plumbline_gateway_worker_calls", (("worker", "1"),))] == 5
    assert merged[("plumbline_gateway_scrape_worker", (("worker", "0"),))] == 1


def test_a_sibling_that_is_gone_or_hangs_is_reported_unreachable_not_an_error(
    tmp_path: Path,
) -> None:
    slot = WorkerSlot(0, 3, tmp_path, tmp_path / "spool")
    # Worker 1 accepts and never answers; worker 2 has no socket at all (it died).
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hung.bind(str(slot.exposition_socket(1)))
    hung.listen(8)
    try:
        merged = _samples(pool_exposition(slot, _registry(3, 1.0, 0.8, 1.0)))
    finally:
        hung.close()
    assert merged[("plumbline_calls_total", (("model", "tiny"),))] == 3
    assert merged[("plumbline_gateway_workers", (("state", "scraped"),))] == 1
    assert merged[("plumbline_gateway_workers", (("state", "unreachable"),))] == 2
