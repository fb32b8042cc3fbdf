"""Whether a TCP port is listened on by a given process group (Linux /proc; elsewhere: unknown).

A health URL answering 200 proves a server is up, not that it is the one just started: a port
picked free may be taken by another process before the child binds it, and the health check
would then pass against that process. The listening socket's inode, found in a process of the
child's group, proves it.
"""

from __future__ import annotations

import os
from pathlib import Path

LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's `st` column


def _listening_inodes(port: int) -> set[str] | None:
    """Inodes of the sockets listening on `port`; None where /proc/net cannot be read."""
    found: set[str] = set()
    readable = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        readable = True
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == LISTEN
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                found.add(fields[9])
    return found if readable else None


def _group_members(group: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(group):
            members.append(int(entry.name))
    return members


def group_listens_on(group: int, port: int) -> bool | None:
    """True or False where /proc tells; None where it cannot (not Linux, hidden processes)."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in _group_members(group):
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in descriptors:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    return True
            except OSError:
                continue
    return False
