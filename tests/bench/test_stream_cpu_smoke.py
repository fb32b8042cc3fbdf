"""bench.stream_cpu runs end to end and in one process, and prints its per-token CPU figures."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.xdist_group("bench-smoke")


def _run(*args: str) -> str:
    finished = subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished.stdout


def test_the_stream_path_alone_reports_cpu_per_event() -> None:
    out = _run("bench.stream_cpu.inprocess", "--streams", "3", "--rounds", "1", "--tokens", "4")
    found = re.search(r"best of 1: ([\d.]+) us CPU per event", out)
    assert found is not None, out
    assert float(found.group(1)) > 0


def test_end_to_end_reports_gateway_and_recorder_cpu_per_token() -> None:
    # Enough tokens that the gateway's CPU is many of /proc's 10 ms ticks, never none.
    args = ("--calls", "16", "--rounds", "1", "--workers", "1", "--tokens", "32")
    out = _run("bench.stream_cpu", *args)
    found = re.search(r"median plumbline\s+main\s+([\d.]+) us/token, children\s+([\d.]+)", out)
    assert found is not None, out
    assert float(found.group(1)) > 0 and float(found.group(2)) > 0
    assert "x-plumbline-overhead-ms): p50" in out
