"""Governance on against off: the same open-loop phases on two gateways, sides rotated per round.

CPU is read per process (the gateway, and its recorder child) over all the latency rounds; then
the budget checks are timed in this process, one call at a time against the same Redis, so the
per-call figure stays visible when wall-clock noise is larger than it.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from dataclasses import dataclass, field

from bench.budget_cost import measure_costs
from bench.overhead import workload
from bench.overhead.governance_sides import REDIS, spent, start_governance_sides
from bench.overhead.latency import LatencyResult, Phase, latency_rounds
from bench.overhead.tracing import ProcessCpu
from simulator.process import SimulatorProcess


@dataclass
class GovernanceRun:
    """Latency rounds, CPU and calls per side, and the in-process cost of the budget checks."""

    sides: list[str]
    phases: list[Phase]
    latency: LatencyResult = field(default_factory=LatencyResult)
    cpu: dict[str, ProcessCpu] = field(default_factory=dict)
    calls: dict[str, float] = field(default_factory=dict)
    # Row -> (p50, p95) microseconds of admit + settle (bench.budget_cost's rows).
    checks: dict[str, tuple[float, float]] = field(default_factory=dict)
    check_calls: int = 0
    # (scope, period, spent) of the "on" side's budgets after the rounds: they were charged.
    budgets: list[tuple[str, str, float]] = field(default_factory=list)


def measure_governance(
    names: tuple[str, ...], phases: list[Phase], rounds: int, seconds: float, check_calls: int
) -> GovernanceRun:
    """Start the sides, run the latency rounds with CPU read around them, then time the checks."""
    run = GovernanceRun(list(names), phases, check_calls=check_calls)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess({"timing": workload.ZERO_TIME}))
        started = start_governance_sides(exits, simulator, names)
        sides = started.sides
        before = {side.name: ProcessCpu.of(side.pid) for side in sides}
        run.latency = latency_rounds(simulator, sides, phases, rounds, seconds, {})
        for side in sides:
            run.cpu[side.name] = ProcessCpu.of(side.pid) - before[side.name]
            run.calls[side.name] = sum(cpu[1] for cpu in run.latency.cpu[side.name].values())
        if "on" in names:
            run.budgets = spent(started)
    run.checks = asyncio.run(measure_costs(REDIS, check_calls))
    return run
