"""Tracing on against tracing off: the same load on gateways that differ only in their collector.

The latency phases of the overhead scenario (open loop, sides rotated within each round), then
closed-loop rounds (as fast as each gateway answers), on four gateways: tracing off, and every
call sampled with a live collector, a collector that is down and one that hangs. CPU is read per
process over the whole run (spans are built and sent by the recorder child in batches, after
the calls that made them), and the span counters once the collectors that answer have settled.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import ExitStack
from dataclasses import dataclass, field

from bench.harness.load import closed_loop
from bench.harness.procstat import cpu_seconds, tree_cpu_seconds
from bench.harness.summary import summarise
from bench.overhead import workload
from bench.overhead.capacity import rotated
from bench.overhead.latency import LatencyResult, Phase, latency_rounds
from bench.overhead.tracing_sides import SpanCounts, span_counts, start_tracing_sides
from bench.proxies.sides import Side
from plumbline.otlp.settings import TraceExportSettings
from simulator.process import SimulatorProcess

POLL_S = 0.2
# However the batching is set, a run does not wait longer than this for the counters to settle.
SETTLE_CAP_S = 180.0


@dataclass(frozen=True)
class ProcessCpu:
    """CPU seconds of a gateway process and of its children (the recorder)."""

    gateway: float
    recorder: float

    @classmethod
    def of(cls, pid: int) -> ProcessCpu:
        """Read now from /proc."""
        own = cpu_seconds(pid)
        return cls(own, tree_cpu_seconds(pid) - own)

    def __sub__(self, other: ProcessCpu) -> ProcessCpu:
        return ProcessCpu(self.gateway - other.gateway, self.recorder - other.recorder)


@dataclass
class TracingRun:
    """Latency rounds, closed-loop rounds, CPU and calls per side, span counters, the receiver."""

    sides: list[str]
    phases: list[Phase]
    settings: TraceExportSettings
    latency: LatencyResult = field(default_factory=LatencyResult)
    closed: list[dict[str, dict[str, float]]] = field(default_factory=list)
    cpu: dict[str, ProcessCpu] = field(default_factory=dict)
    calls: dict[str, float] = field(default_factory=dict)
    spans: dict[str, SpanCounts] = field(default_factory=dict)
    received: int = 0
    settle_s: float = 0.0


def closed_rounds(
    simulator: SimulatorProcess, sides: list[Side], rounds: int, workers: int, calls: int
) -> list[dict[str, dict[str, float]]]:
    """`rounds` closed-loop runs of `calls` 16-token calls per side, sides rotated."""
    simulator.set_timing(workload.ZERO_TIME)
    results = []
    for index in range(rounds):
        row = {}
        for side in rotated(sides, index):
            started = time.perf_counter()
            samples = asyncio.run(
                closed_loop(side.url, workload.short(), side.headers, workers, calls)
            )
            row[side.name] = {**summarise(samples), "rate": calls / (time.perf_counter() - started)}
        results.append(row)
        print(f"closed-loop round {index + 1} of {rounds} done", flush=True)
    return results


def _settled(counts: SpanCounts, name: str) -> bool:
    # A hung collector holds its batches for tries x the export timeout: it is not waited for.
    return name in ("off", "hung") or counts.queued <= 0


def settle(base_urls: dict[str, str], timeout_s: float) -> tuple[dict[str, SpanCounts], float]:
    """Counters once every side but the hung one accounts for each call (or at `timeout_s`)."""
    started = time.monotonic()
    while True:
        counts = {name: span_counts(url) for name, url in base_urls.items()}
        waited = time.monotonic() - started
        if all(_settled(c, name) for name, c in counts.items()) or waited > timeout_s:
            return counts, waited
        time.sleep(POLL_S)


@dataclass(frozen=True)
class Load:
    """What one tracing run sends."""

    phases: list[Phase]
    rounds: int
    seconds: float
    closed_rounds: int
    closed_workers: int
    closed_calls: int


def measure_tracing(
    names: tuple[str, ...], load: Load, settings: TraceExportSettings
) -> TracingRun:
    """Start the sides, run the load, settle the exporters, then read CPU and counters."""
    run = TracingRun(list(names), load.phases, settings)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess({"timing": workload.ZERO_TIME}))
        started = start_tracing_sides(exits, simulator, names)
        before = {side.name: ProcessCpu.of(side.pid) for side in started.sides}
        recorded = {name: span_counts(url).recorded for name, url in started.base_urls.items()}
        run.latency = latency_rounds(
            simulator, started.sides, load.phases, load.rounds, load.seconds, {}
        )
        run.closed = closed_rounds(
            simulator, started.sides, load.closed_rounds, load.closed_workers, load.closed_calls
        )
        # Two schedule delays and every try of a batch: the live and the dead side are done.
        limit = min(
            2 * settings.schedule_delay_s + 3 * settings.target.timeout_s + 10, SETTLE_CAP_S
        )
        run.spans, run.settle_s = settle(dict(started.base_urls), limit)
        for side in started.sides:
            run.cpu[side.name] = ProcessCpu.of(side.pid) - before[side.name]
            run.calls[side.name] = run.spans[side.name].recorded - recorded[side.name]
        run.received = len(started.receiver.spans)
    return run
