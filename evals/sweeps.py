"""The sweeper's view: every piece of work whose message was lost or whose worker died."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from evals.alerts.repository import notifications as notification_repo
from evals.live_sampling import repository as live_repo
from evals.runs.fanout import SweepPlan, sweep_runs
from plumbline.settings import WorkerSettings


@dataclass(slots=True)
class Sweep:
    """Runs to start, batches to re-send, runs to finalise, notifications to deliver."""

    runs: SweepPlan = field(default_factory=SweepPlan)
    notifications: list[int] = field(default_factory=list)
    live_requeued: int = 0

    @property
    def empty(self) -> bool:
        """True when nothing needed doing."""
        runs = self.runs
        return not (runs.start or runs.batches or runs.finalize or self.notifications) and (
            not self.live_requeued
        )


def sweep(session: Session, now: datetime, settings: WorkerSettings) -> Sweep:
    """Find stalled work; live samples are put back to pending here (the dispatcher re-queues)."""
    runs = sweep_runs(
        session,
        now,
        stall_after_s=settings.stall_after_s,
        sample_lease_s=settings.sample_lease_s,
        finalize_lease_s=settings.finalize_lease_s,
        batch_size=settings.batch_size,
    )
    notify = settings.notify
    overdue = now - timedelta(seconds=max(settings.sweep_interval_s, notify.timeout_s) * 2)
    stuck = notification_repo.stuck(session, overdue, now - timedelta(seconds=notify.timeout_s * 3))
    lost = now - timedelta(seconds=settings.stall_after_s)
    requeued = live_repo.requeue_stale(session, lost, lost)
    return Sweep(runs, stuck, requeued)
