"""What one overhead run measured, and the medians and differences its report quotes."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.harness.profile import Hotspot
from bench.harness.stats import median
from bench.harness.step_search import SearchResult
from bench.overhead.latency import LatencyResult, Phase
from bench.overhead.memory import MemoryCurve


@dataclass
class OverheadRun:
    """Everything one run measured."""

    sides: list[str]
    phases: list[Phase]
    latency: LatencyResult
    capacity: dict[str, list[SearchResult]]
    memory: dict[str, MemoryCurve]
    profile: list[Hotspot] = field(default_factory=list)


def figure(run: OverheadRun, side: str, phase: str, metric: str) -> float:
    """Median over rounds of one side's metric in one phase (NaN if it was skipped)."""
    return median([r[side][phase][metric] for r in run.latency.rounds if phase in r.get(side, {})])


def added(run: OverheadRun, side: str, phase: str, metric: str, base: str = "direct") -> float:
    """Median over rounds of (side - base) in the same round."""
    return median(
        [
            r[side][phase][metric] - r[base][phase][metric]
            for r in run.latency.rounds
            if phase in r.get(side, {}) and phase in r.get(base, {})
        ]
    )


def sustained(run: OverheadRun, side: str) -> float:
    """Median of the side's maximum sustained rate over the search rounds."""
    return median([r.sustained for r in run.capacity.get(side, [])])


def flat_change(curve: MemoryCurve) -> float:
    """Relative RSS change from the first tenth of the calls to the last point."""
    if len(curve.points) < 3:
        return float("nan")
    return curve.points[-1][1] / curve.points[1][1] - 1
