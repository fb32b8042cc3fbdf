"""CPU time and resident memory of a process (or a process and its descendants), from /proc."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident set size in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def process_tree(pid: int) -> list[int]:
    """The process and every live descendant (an nginx master and its worker, say)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, []))
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of the process and its live descendants."""
    total = 0.0
    for member in process_tree(pid):
        try:
            total += cpu_seconds(member)
        except OSError:
            continue
    return total


def tree_rss_mib(pid: int) -> float:
    """Resident MiB of the process and its live descendants (shared pages counted in each)."""
    total = 0.0
    for member in process_tree(pid):
        try:
            total += rss_mib(member)
        except OSError:
            continue
    return total
