"""py-spy on the Plumbline gateway while it carries the loaded phases, for the report."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.harness.load import open_loop
from bench.harness.profile import Hotspot, hotspots, recording
from bench.overhead import workload
from bench.overhead.latency import Phase
from bench.proxies.sides import Side
from simulator.process import SimulatorProcess


def profile_side(
    simulator: SimulatorProcess, side: Side, phases: list[Phase], seconds: float
) -> list[Hotspot]:
    """Where the side's process spends its CPU over the heaviest phase of each kind."""
    output = Path(tempfile.mkdtemp(prefix="plumbline-spy-")) / f"{side.name}.txt"
    with recording(side.pid, output):
        for kind in ("plain", "stream"):
            rate = max(p.rate for p in phases if p.kind == kind)
            timing = workload.ZERO_TIME if kind == "plain" else workload.STREAM_TIME
            simulator.set_timing(timing)
            request = workload.plain() if kind == "plain" else workload.stream()
            asyncio.run(open_loop(side.url, [request], side.headers, rate, seconds))
    # Ranked by time on top: on-stack shares only show the framework every frame runs under.
    return hotspots(output, top=16, by_own=True)
