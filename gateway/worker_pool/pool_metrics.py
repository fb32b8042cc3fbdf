"""The pool's /metrics: this worker's families and its siblings', gathered within a timeout."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric

from gateway.worker_pool.exposition_socket import fetch_exposition
from gateway.worker_pool.merge import MergedCollector, calls_served, merge, parse
from gateway.worker_pool.slot import WorkerSlot

# Siblings not answering within this long are reported unreachable; the scrape still answers.
GATHER_TIMEOUT_S = 3.0


def _gather(slot: WorkerSlot, own: bytes, timeout_s: float) -> dict[int, list[Metric] | None]:
    found: dict[int, list[Metric] | None] = {slot.index: parse(own.decode())}

    def fetch(index: int) -> None:
        text = fetch_exposition(slot.exposition_socket(index), timeout_s)
        found[index] = parse(text) if text is not None else None

    threads = [
        threading.Thread(target=fetch, args=(i,), name="plumbline-gather", daemon=True)
        for i in range(slot.count)
        if i != slot.index
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout_s + 0.5)
    return {i: found.get(i) for i in range(slot.count)}


def _pool_families(slot: WorkerSlot, gathered: dict[int, list[Metric] | None]) -> list[Metric]:
    workers = GaugeMetricFamily(
        "plumbline_gateway_workers",
        "Workers of this gateway whose metrics this scrape includes (scraped) or lacks",
        labels=["state"],
    )
    scraped = sum(1 for families in gathered.values() if families is not None)
    workers.add_metric(["scraped"], scraped)
    workers.add_metric(["unreachable"], slot.count - scraped)
    calls = GaugeMetricFamily(
        "plumbline_gateway_worker_calls",
        "Calls each worker counted since it started (how the port shares the load)",
        labels=["worker"],
    )
    for index, families in sorted(gathered.items()):
        if families is not None:
            calls.add_metric([str(index)], calls_served(families))
    answered = GaugeMetricFamily(
        "plumbline_gateway_scrape_worker", "The worker that answered this scrape", labels=["worker"]
    )
    answered.add_metric([str(slot.index)], 1.0)
    return [workers, calls, answered]


def pool_exposition(slot: WorkerSlot, registry: CollectorRegistry) -> bytes:
    """The exposition of the whole pool, whichever worker answers."""
    gathered = _gather(slot, generate_latest(registry), GATHER_TIMEOUT_S)
    merged = merge(families for families in gathered.values() if families is not None)
    out = CollectorRegistry(auto_describe=False)
    out.register(MergedCollector([*merged, *_pool_families(slot, gathered)]))
    return generate_latest(out)
