"""WorkerSlot: which of the supervisor's workers this process is, and where its siblings are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gateway.recording.spool_adoption import OrphanSpools, worker_spool_dir


@dataclass(frozen=True, slots=True)
class WorkerSlot:
    """Worker `index` of `count`; sockets of every worker's own /metrics are in `run_dir`."""

    index: int
    count: int
    run_dir: Path
    # The configured recording.spool_dir: each worker spools in a folder of its own below it.
    spool_root: Path

    def exposition_socket(self, index: int) -> Path:
        """The unix socket worker `index` serves its own metrics on."""
        return self.run_dir / f"worker-{index}.sock"

    def spool_dir(self) -> Path:
        """This worker's spool directory."""
        return worker_spool_dir(self.spool_root, self.index)

    def orphans(self) -> OrphanSpools | None:
        """Worker 0 adopts the spools of indexes not started now and of a one-process gateway."""
        if self.index != 0:
            return None
        active = tuple(str(worker_spool_dir(self.spool_root, i)) for i in range(self.count))
        return OrphanSpools(root=str(self.spool_root), active=active)


def single_process_orphans(spool_dir: Path) -> OrphanSpools:
    """A one-process gateway adopts every worker-* spool below its own (a pool ran before)."""
    return OrphanSpools(root=str(spool_dir), active=(str(spool_dir),))
