"""One recorder per spool directory: an flock on `<dir>/.lock`, released when its process dies."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = ".lock"


class SpoolLock:
    """An exclusive lock on a spool directory, held by the recorder that replays it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._descriptor: int | None = None

    def acquire(self, *, wait: bool) -> bool:
        """Take the lock; without `wait`, False at once if another process holds it."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(descriptor)
            return False
        self._descriptor = descriptor
        return True

    def release(self) -> None:
        """Let another recorder have the directory."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
