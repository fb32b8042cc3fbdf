"""Spools no live recorder owns (a worker index no longer started) moved into a live one's spool.

Each gateway worker's recorder owns `<spool_dir>/worker-<i>` and holds its lock while it runs.
The directories of indexes not in use now (fewer workers than before), and the top directory
(a one-process gateway's), would otherwise never be replayed: one recorder adopts them. It takes
each orphan's lock without waiting (a recorder still draining it keeps it) and renames its files
into its own spool, where its sink replays them; the lock makes a concurrent replay impossible.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from gateway.recording.spool_lock import SpoolLock

log = logging.getLogger(__name__)
WORKER_PREFIX = "worker-"


@dataclass(frozen=True, slots=True)
class OrphanSpools:
    """Where orphans may be (`root` and its worker-* folders) and the folders in use."""

    root: str
    active: tuple[str, ...]


def worker_spool_dir(root: Path, index: int) -> Path:
    """The spool directory of gateway worker `index`."""
    return root / f"{WORKER_PREFIX}{index}"


def _candidates(orphans: OrphanSpools) -> list[Path]:
    root = Path(orphans.root)
    active = {Path(p).resolve() for p in orphans.active}
    found = [root] if root.is_dir() else []
    if root.is_dir():
        found += sorted(p for p in root.glob(f"{WORKER_PREFIX}*") if p.is_dir())
    return [p for p in found if p.resolve() not in active]


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def adopt_orphans(orphans: OrphanSpools, into: Path) -> int:
    """Move the files of every unlocked orphan spool into `into`; how many were moved."""
    moved = 0
    for directory in _candidates(orphans):
        lock = SpoolLock(directory)
        if not lock.acquire(wait=False):
            continue
        try:
            files = sorted(directory.glob("spool-*.jsonl"))
            if not files:
                continue
            into.mkdir(mode=0o700, parents=True, exist_ok=True)
            for path in files:
                path.rename(into / path.name)
            # Both entries durable before the lock goes: the file is in exactly one spool.
            _fsync_directory(into)
            _fsync_directory(directory)
            moved += len(files)
            log.warning("adopted %d spooled batches of %s", len(files), directory)
        finally:
            lock.release()
    return moved
