"""Orphan spools: moved into a live recorder's spool, unless their own recorder still holds them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gateway.recording.rows import RowBatch
from gateway.recording.spool import Spool
from gateway.recording.spool_adoption import adopt_orphans, worker_spool_dir
from gateway.recording.spool_lock import SpoolLock
from gateway.worker_pool.slot import WorkerSlot, single_process_orphans

HOLD_LOCK = (
    "import sys; from pathlib import Path; from gateway.recording.spool_lock import SpoolLock; "
    "SpoolLock(Path(sys.argv[1])).acquire(wait=False) or sys.exit(3); "
    "print('locked', flush=True); sys.stdin.read()"
)


def _spool_one(directory: Path) -> Path:
    return Spool(directory).write(RowBatch(calls=[{"id": directory.name}], logprobs=[], bodies=[]))


def test_worker_zero_adopts_unused_indexes_and_the_top_spool_but_not_a_locked_one(
    tmp_path: Path,
) -> None:
    slot = WorkerSlot(0, 2, tmp_path / "run", tmp_path / "spool")
    own = worker_spool_dir(slot.spool_root, 0)
    for directory in (slot.spool_root, *(worker_spool_dir(slot.spool_root, i) for i in range(4))):
        _spool_one(directory)
    orphans = slot.orphans()
    assert orphans is not None
    # Worker 3's old recorder is still draining: its lock keeps the adopter out.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(worker_spool_dir(slot.spool_root, 3))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert adopt_orphans(orphans, own) == 2  # the top spool's and worker 2's
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    assert adopt_orphans(orphans, own) == 1  # worker 3's, once its recorder let go
    names = sorted(batch.calls[0]["id"] for _, batch in Spool(own).read_all())
    assert names == ["spool", "worker-0", "worker-2", "worker-3"]
    # Worker 1 runs: its spool is its own, whatever its lock says.
    assert len(Spool(worker_spool_dir(slot.spool_root, 1)).pending_files()) == 1
    assert WorkerSlot(1, 2, slot.run_dir, slot.spool_root).orphans() is None


def test_a_one_process_gateway_adopts_the_spools_a_pool_left(tmp_path: Path) -> None:
    for index in range(2):
        _spool_one(worker_spool_dir(tmp_path, index))
    assert adopt_orphans(single_process_orphans(tmp_path), tmp_path) == 2
    assert len(Spool(tmp_path).pending_files()) == 2
    lock = SpoolLock(worker_spool_dir(tmp_path, 0))
    assert lock.acquire(wait=False)  # the adopter let go of what it emptied
    lock.release()
