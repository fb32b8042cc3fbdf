"""What a process holds open, from /proc: descriptors by kind, TCP connections by remote port."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

TCP_STATES = {"01": "established", "06": "time_wait", "07": "close", "08": "close_wait"}


def descriptor_kinds(pid: int) -> Counter[str]:
    """Open descriptors by kind: socket, pipe, anon_inode, file."""
    kinds: Counter[str] = Counter()
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(entry)
        except OSError:
            continue  # closed while we looked
        kind = target.split(":", 1)[0] if ":" in target and "[" in target else "file"
        kinds[kind] += 1
    return kinds


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def connections_to(pid: int, ports: set[int]) -> Counter[str]:
    """The process's TCP sockets to any of `ports` (loopback IPv4), counted by state."""
    inodes = _socket_inodes(pid)
    states: Counter[str] = Counter()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port = int(fields[2].rsplit(":", 1)[1], 16)
        if fields[9] in inodes and remote_port in ports:
            states[TCP_STATES.get(fields[3], fields[3])] += 1
    return states


def cpu_and_wait_s(pid: int) -> tuple[float, float]:
    """Seconds the process has run on a CPU, and waited runnable for one (/proc/PID/schedstat)."""
    on_cpu, waiting, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    return int(on_cpu) / 1e9, int(waiting) / 1e9


def favour(pid: int) -> bool:
    """Put a process's main thread in the real-time class (SCHED_FIFO) where allowed.

    Used on the processes under test when what is timed is their reaction, so that unrelated
    jobs sharing the machine do not keep them off the CPU. Needs CAP_SYS_NICE (root); the
    kernel's real-time throttling still leaves 5% of each second to everything else.
    """
    try:
        os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(1))
    except PermissionError:
        return False
    return True
