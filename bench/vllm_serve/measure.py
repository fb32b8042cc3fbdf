"""Rounds of vLLM's client against each side in turn, with the gateway's CPU over its runs."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bench.overhead.tracing import ProcessCpu
from bench.vllm_serve.client import Workload, run_client
from bench.vllm_serve.cores import CorePlan, pin_self
from bench.vllm_serve.server import VllmServer, tiny_model_dir
from bench.vllm_serve.sides import ServeSide, start_serve_sides
from plumbline.models import Call
from tests.support.databases import count_rows

T = TypeVar("T")
# The recorder writes in batches after the calls: how long to wait for the last ones, and how
# long the count must hold still (the client's /tokenize probe is recorded too, so reaching the
# number of chat calls sent is not proof that the last of them is in).
RECORDED_WAIT_S = 120.0
STABLE_S = 1.0
POLL_S = 0.2
# How long the gateway is watched with nothing sent, for the CPU it spends idle (timers, probes),
# after a pause for its recorder to finish starting (it spends most of a CPU for a second or two).
IDLE_S = 20.0
SETTLE_S = 5.0


@dataclass(frozen=True)
class SideRun:
    """One client run against one side: vLLM's result, and for Plumbline its CPU and records."""

    side: str
    round: int
    result: dict[str, Any]
    cpu: ProcessCpu | None = None
    # Calls the client sent in this run (warm-ups included) and those the gateway recorded.
    sent: int = 0
    recorded: int = 0
    # Seconds the CPU was read over (the client's start-up and the recorder's catching up too).
    window_s: float = 0.0

    def figure(self, key: str) -> float:
        """A figure of vLLM's result (`p50_itl_ms`, `output_throughput`), NaN if absent."""
        value = self.result.get(key)
        return float(value) if isinstance(value, int | float) else float("nan")


@dataclass
class ServeRun:
    """Everything the report needs: the sides, the workload, the pinning and every run."""

    sides: list[str]
    work: Workload
    plan: CorePlan
    vllm_cpus: frozenset[int] = frozenset()
    runs: list[SideRun] = field(default_factory=list)
    # The gateway's and recorder's CPU seconds per second with nothing sent, and over how long.
    idle: ProcessCpu | None = None
    idle_s: float = 0.0


def rotated(items: Sequence[T], index: int) -> list[T]:
    """The items in the order of round `index`, so none always goes first."""
    shift = index % len(items)
    return [*items[shift:], *items[:shift]]


def _wait_recorded(database: str, expected: int) -> int:
    deadline = time.monotonic() + RECORDED_WAIT_S
    found, changed = count_rows(database, Call), time.monotonic()
    while time.monotonic() < deadline:
        if found >= expected and time.monotonic() - changed >= STABLE_S:
            break
        time.sleep(POLL_S)
        now = count_rows(database, Call)
        if now != found:
            found, changed = now, time.monotonic()
    return found


def run_side(side: ServeSide, index: int, work: Workload, out: Path) -> SideRun:
    """One client run; for the gateway, its CPU until every call of the run is recorded."""
    if not side.pid:
        result = run_client(side.base_url, None, side.extra_body, work, out)
        return SideRun(side.name, index, result)
    before_rows = count_rows(side.database, Call)
    before, started = ProcessCpu.of(side.pid), time.monotonic()
    result = run_client(side.base_url, side.api_key, side.extra_body, work, out)
    sent = work.warmups + int(result.get("completed", 0)) + int(result.get("failed", 0))
    recorded = _wait_recorded(side.database, before_rows + sent) - before_rows
    cpu = ProcessCpu.of(side.pid) - before
    return SideRun(side.name, index, result, cpu, sent, recorded, time.monotonic() - started)


def idle_rate(pid: int, seconds: float) -> ProcessCpu:
    """The gateway's and its recorder's CPU seconds per second while nothing is sent."""
    time.sleep(SETTLE_S)
    before, started = ProcessCpu.of(pid), time.monotonic()
    time.sleep(seconds)
    spent, elapsed = ProcessCpu.of(pid) - before, time.monotonic() - started
    return ProcessCpu(spent.gateway / elapsed, spent.recorder / elapsed)


def measure(
    names: Sequence[str], work: Workload, rounds: int, plan: CorePlan, idle_s: float = IDLE_S
) -> ServeRun:
    """Start vLLM and the sides, then `rounds` rounds of every named side, rotated."""
    pin_self(plan)
    run = ServeRun(list(names), work, plan)
    out_dir = Path(tempfile.mkdtemp(prefix="plumbline-vllm-serve-"))
    with ExitStack() as exits:
        server = exits.enter_context(VllmServer(plan, out_dir / "vllm-server.log"))
        run.vllm_cpus = server.cpus_of_processes()
        sides = [s for s in start_serve_sides(exits, server.url, server.port) if s.name in names]
        gateway = next((s for s in sides if s.pid), None)
        if gateway is not None and idle_s > 0:
            run.idle, run.idle_s = idle_rate(gateway.pid, idle_s), idle_s
        for index in range(rounds):
            for side in rotated(sides, index):
                out = out_dir / f"round{index}-{side.name}.json"
                run.runs.append(run_side(side, index, work, out))
    return run


def workload(requests: int, rate: float, input_len: int, output_len: int, warmups: int) -> Workload:
    """The workload, with the tiny model's tokenizer (its directory) for vLLM's client."""
    return Workload(requests, rate, input_len, output_len, warmups, 0, tiny_model_dir())
