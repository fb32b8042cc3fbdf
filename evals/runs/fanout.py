"""Fan a run out over workers: batches of sample ids, and what the sweeper must re-enqueue.

Every function takes a session and only reads or writes rows; the caller commits and then
enqueues (a task never starts before the rows it names are committed).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from evals.runs.repository import finalizations as finalization_repo
from evals.runs.repository import progress as run_progress
from evals.runs.repository import runs as run_repo
from evals.runs.start import ACTIVE, begin_run

log = logging.getLogger(__name__)


def batches(ids: Sequence[int], size: int) -> list[list[int]]:
    """Consecutive chunks of at most `size` ids."""
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def start_fanout(
    session: Session, run_id: int, batch_size: int, *, resume: bool = False
) -> list[list[int]] | None:
    """Mark the run running and batch its unfinished samples; None if it needs nothing.

    A start message delivered twice, or one for a run that already ended, changes nothing.
    """
    run = run_repo.run_by_id(session, run_id, None)
    if run is None:
        log.warning("run %s: no such run; start ignored", run_id)
        return None
    if run.status not in ACTIVE and not resume:
        log.info("run %s is %s; start ignored", run_id, run.status)
        return None
    if resume and run.status in ACTIVE:
        # A resume of a run still queued or executing is a plain start: releasing its live
        # claims (and its finalisation) would let a second batch execute the same samples.
        # Claims that outlived their lease are taken over by the batches anyway.
        resume = False
    if resume:
        finalization_repo.reset(session, run_id)
    return batches(begin_run(session, run_id, resume=resume), batch_size)


def ready_to_finalize(session: Session, run_id: int) -> bool:
    """True once the run is running and none of its samples is pending or running."""
    run = run_repo.run_by_id(session, run_id, None)
    return (
        run is not None
        and run.status == "running"
        and run_progress.in_flight_count(session, run_id) == 0
    )


@dataclass(slots=True)
class SweepPlan:
    """What a sweep found: runs to start, batches to re-enqueue, runs to finalise."""

    start: list[int] = field(default_factory=list)
    batches: list[tuple[int, list[int]]] = field(default_factory=list)
    finalize: list[int] = field(default_factory=list)


def sweep_runs(
    session: Session,
    now: datetime,
    *,
    stall_after_s: float,
    sample_lease_s: float,
    finalize_lease_s: float,
    batch_size: int,
) -> SweepPlan:
    """Find runs whose messages were lost or whose worker died, and the work to send again."""
    quiet_since = now - timedelta(seconds=stall_after_s)
    lease_expired = now - timedelta(seconds=sample_lease_s)
    plan = SweepPlan(start=run_progress.unstarted_queued_runs(session, quiet_since))
    for run_id in run_progress.stalled_runs(session, quiet_since, lease_expired):
        ids = run_progress.orphaned_sample_ids(session, run_id, lease_expired)
        plan.batches.extend((run_id, chunk) for chunk in batches(ids, batch_size))
    stale_claim = now - timedelta(seconds=finalize_lease_s)
    plan.finalize = run_progress.unfinalized_runs(session, stale_claim)
    return plan
