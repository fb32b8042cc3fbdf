"""Latency phases at fixed rates, sides alternating within each round; CPU per call alongside."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bench.harness.load import Request, open_loop
from bench.harness.procstat import tree_cpu_seconds
from bench.harness.summary import summarise
from bench.overhead import workload
from bench.overhead.capacity import rotated
from bench.proxies.sides import Side
from simulator.process import SimulatorProcess

FAR_ABOVE = 4.0


@dataclass(frozen=True)
class Phase:
    """A request kind at an open-loop rate."""

    kind: str  # "plain" or "stream"
    rate: float

    @property
    def key(self) -> str:
        """`plain@200`, say."""
        return f"{self.kind}@{self.rate:g}"


@dataclass
class LatencyResult:
    """Per round, per side and phase, the summary; CPU seconds and calls per side and kind."""

    rounds: list[dict[str, dict[str, dict[str, float]]]] = field(default_factory=list)
    cpu: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)


def _request(kind: str) -> Request:
    return workload.plain() if kind == "plain" else workload.stream()


def warm_up(sides: list[Side]) -> None:
    """Open connections and fill caches (keys, generated answers) on every side."""
    for side in sides:
        for kind in ("plain", "stream"):
            asyncio.run(open_loop(side.url, [_request(kind)], side.headers, 10, 1))


def latency_rounds(
    simulator: SimulatorProcess,
    sides: list[Side],
    phases: list[Phase],
    rounds: int,
    seconds: float,
    capacity: dict[str, float],
) -> LatencyResult:
    """Each round runs every phase on every side; a side skips loads far above its capacity.

    Far above: more than `FAR_ABOVE` times the rate it sustained in the capacity search (whose
    calls differ: half streamed, all with model time), where it would only pile up a queue.
    The lightest phase of each kind always runs: it is where unloaded added latency is read.
    """
    result = LatencyResult()
    lightest = {kind: min(p.rate for p in phases if p.kind == kind) for kind in ("plain", "stream")}
    for side in sides:
        result.cpu[side.name] = {"plain": [0.0, 0.0], "stream": [0.0, 0.0]}
        limit = capacity.get(side.name, float("inf"))
        result.skipped[side.name] = [
            p.key for p in phases if p.rate > FAR_ABOVE * limit and p.rate > lightest[p.kind]
        ]
    warm_up(sides)
    for index in range(rounds):
        row: dict[str, dict[str, dict[str, float]]] = {side.name: {} for side in sides}
        for phase in phases:
            timing = workload.ZERO_TIME if phase.kind == "plain" else workload.STREAM_TIME
            simulator.set_timing(timing)
            for side in rotated(sides, index):
                if phase.key in result.skipped[side.name]:
                    continue
                before = tree_cpu_seconds(side.pid)
                samples = asyncio.run(
                    open_loop(side.url, [_request(phase.kind)], side.headers, phase.rate, seconds)
                )
                spent = result.cpu[side.name][phase.kind]
                spent[0] += tree_cpu_seconds(side.pid) - before
                spent[1] += len(samples)
                row[side.name][phase.key] = summarise(samples)
        result.rounds.append(row)
        print(f"latency round {index + 1} of {rounds} done", flush=True)
    return result
