"""Resident memory of each proxy over many short calls (is it flat?)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from bench.harness.load import closed_loop
from bench.harness.procstat import tree_rss_mib
from bench.overhead import workload
from bench.proxies.sides import Side
from simulator.process import SimulatorProcess


@dataclass
class MemoryCurve:
    """(calls so far, resident MiB) points; whether the time budget cut it short."""

    points: list[tuple[int, float]] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0
    cut_short: bool = False


def memory_curve(side: Side, calls: int, budget_s: float, concurrency: int = 32) -> MemoryCurve:
    """RSS of the side's process tree after each tenth of `calls` 16-token calls."""
    curve = MemoryCurve(points=[(0, tree_rss_mib(side.pid))])
    step = max(1, calls // 10)
    started = time.monotonic()
    done = 0
    while done < calls:
        if time.monotonic() - started > budget_s:
            curve.cut_short = True
            break
        samples = asyncio.run(
            closed_loop(side.url, workload.short(), side.headers, concurrency, step)
        )
        curve.errors += sum(1 for s in samples if s.status != 200)
        done += step
        curve.points.append((done, tree_rss_mib(side.pid)))
    curve.seconds = time.monotonic() - started
    return curve


def memory_curves(
    simulator: SimulatorProcess, sides: list[Side], calls: int, budget_s: float
) -> dict[str, MemoryCurve]:
    """A curve for every proxy side (the simulator itself is not measured)."""
    simulator.set_timing(workload.ZERO_TIME)
    curves = {}
    for side in sides:
        if side.name == "direct":
            continue
        curves[side.name] = memory_curve(side, calls, budget_s)
        last = curves[side.name].points[-1]
        print(f"memory: {side.name} {last[1]:.0f} MiB after {last[0]:,} calls", flush=True)
    return curves
