"""The opening lines every result section shares: date, machine, load, command, notes."""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from pathlib import Path

from bench.harness.machine import describe


def load_average() -> str:
    """1, 5 and 15 minute load averages (how busy the shared machine was)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def command_line(module: str) -> str:
    """The command that produced this section, as typed."""
    return " ".join(["python -m", module, *map(shlex.quote, sys.argv[1:])])


def section_header(
    module: str,
    notes: list[str],
    extra: tuple[str, ...] = (),
    tools: tuple[str, ...] = (),
    busy: str | None = None,
) -> list[str]:
    """`### <date>`, the machine, the load average when it started, the command and notes."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"### {stamp}",
        "",
        f"Machine: {describe(extra, tools)}",
        "",
        f"Load average at start: {load_average()}." + (f" {busy}" if busy else ""),
        "",
        f"Command: `{command_line(module)}`",
    ]
    if notes:
        lines += ["", *notes]
    return lines
