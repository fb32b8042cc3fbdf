"""CPU seconds each part of the eval stack used over a run, and the whole machine, from /proc."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen

from bench.harness.procstat import cpu_seconds, process_tree
from tests.workers.processes import CeleryProcess
from tests.workers.stack import WorkerStack

COMPONENTS = ("simulator", "gateway and recorder", "workers", "postgres", "redis")


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds per component, and busy CPU seconds of the machine (other load included)."""

    seconds: dict[str, float]
    machine_s: float

    @property
    def total_s(self) -> float:
        """CPU seconds of the stack's own processes."""
        return sum(self.seconds.values())


def _commands(prefix: bytes) -> dict[int, bytes]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(prefix):
                found[int(entry.name)] = command
    return found


def _pids(stack: WorkerStack, workers: list[CeleryProcess]) -> dict[str, Callable[[], list[int]]]:
    database = stack.database_url.rsplit("/", 1)[1].encode()

    def postgres() -> list[int]:
        # Backends of this stack's database only; other work may share the server.
        return [pid for pid, cmd in _commands(b"postgres:").items() if database in cmd]

    def trees(processes: list[Popen[bytes] | None]) -> list[int]:
        return [pid for p in processes if p is not None for pid in process_tree(p.pid)]

    return {
        "simulator": lambda: process_tree(stack.simulator.pid),
        "gateway and recorder": lambda: trees([stack.gateway.process]),
        "workers": lambda: trees([worker.process for worker in workers]),
        "postgres": postgres,
        # The Redis server is shared with whatever else runs; its share here is small.
        "redis": lambda: list(_commands(b"redis-server")),
    }


def _machine_busy_s() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except (OSError, IndexError):
            continue
    return total


class CpuMeter:
    """`start()` before a run, `stop()` after it: the CPU it took, per component."""

    def __init__(self, stack: WorkerStack, workers: list[CeleryProcess]) -> None:
        self._pids = _pids(stack, workers)
        self._start: dict[str, float] = {}
        self._machine = 0.0

    def start(self) -> None:
        """Read the counters at the start of a run."""
        self._start = {name: _seconds(pids()) for name, pids in self._pids.items()}
        self._machine = _machine_busy_s()

    def stop(self) -> CpuUse:
        """The CPU seconds since `start()`."""
        used = {
            name: max(_seconds(pids()) - self._start.get(name, 0.0), 0.0)
            for name, pids in self._pids.items()
        }
        return CpuUse(used, _machine_busy_s() - self._machine)
