"""Maximum sustained requests per second of each side, searched in alternating rounds."""

from __future__ import annotations

import asyncio

from bench.harness.load import open_loop
from bench.harness.step_search import SearchResult, SearchRules, step_up
from bench.harness.summary import summarise
from bench.overhead import workload
from bench.proxies.sides import Side
from simulator.process import SimulatorProcess


def rotated(sides: list[Side], index: int) -> list[Side]:
    """The sides in the order of round `index`, so none always goes first."""
    shift = index % len(sides)
    return sides[shift:] + sides[:shift]


def search_side(side: Side, seconds: float, rules: SearchRules) -> SearchResult:
    """One step-up search of one side with the half-streaming mix."""
    mix = [workload.plain(), workload.stream()]

    def run(rate: float) -> dict[str, float]:
        samples = asyncio.run(open_loop(side.url, mix, side.headers, rate, seconds, 30.0))
        return summarise(samples)

    return step_up(run, rules)


def capacity_rounds(
    simulator: SimulatorProcess,
    sides: list[Side],
    rounds: int,
    seconds: float,
    rules: SearchRules,
) -> dict[str, list[SearchResult]]:
    """`rounds` searches per side, sides alternating; every call costs 200 x 2 ms of model."""
    simulator.set_timing(workload.MIX_TIME)
    results: dict[str, list[SearchResult]] = {side.name: [] for side in sides}
    for index in range(rounds):
        for side in rotated(sides, index):
            found = search_side(side, seconds, rules)
            results[side.name].append(found)
            print(
                f"capacity round {index + 1}: {side.name} sustains {found.sustained:.0f} rps "
                f"({found.limit_reason})",
                flush=True,
            )
    return results
