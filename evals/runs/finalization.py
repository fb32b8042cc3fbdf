"""Finalise a run exactly once: claim it, score it, decide its alerts, mark it done.

Whoever sees the last sample settle (a batch task, or the sweeper) asks for finalisation; the
claim (an insert, or a conditional update of a stale claim) lets exactly one proceed. Scoring
replaces a run's results and alert decisions are unique per run, so a worker that dies half way
leaves nothing a second attempt could double.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.decisions import AlertOutcome, alert_baseline, decide_alerts
from evals.runs.fanout import ready_to_finalize
from evals.runs.repository import finalizations as finalization_repo
from evals.runs.repository import runs as run_repo
from evals.runs.scoring import score_and_store
from evals.scoring import RunScore
from evals.transaction import in_transaction
from plumbline.settings import NotifySettings


@dataclass(frozen=True, slots=True)
class Finalized:
    """Whether this call finalised the run, its status and its alert outcome."""

    claimed: bool
    status: str | None = None
    alerts: AlertOutcome | None = None
    score: RunScore | None = None

    @property
    def notification_ids(self) -> tuple[int, ...]:
        """Notifications to enqueue (after commit, which has happened)."""
        return self.alerts.notification_ids if self.alerts else ()


def finalize_run(
    sessions: sessionmaker[Session],
    run_id: int,
    *,
    notify: NotifySettings,
    lease_s: float,
    logprob_wait_s: float = 15.0,
) -> Finalized:
    """Score and alert the run if this caller wins the claim; otherwise do nothing."""
    now = datetime.now(UTC)
    stale = now - timedelta(seconds=lease_s)
    if not in_transaction(sessions, _claim, run_id, now, stale):
        return Finalized(False)
    baseline = in_transaction(sessions, alert_baseline, run_id)
    score = score_and_store(
        sessions, run_id, logprob_wait_s=logprob_wait_s, baseline_run_id=baseline
    )

    def decide(session: Session) -> Finalized:
        done = datetime.now(UTC)
        outcome = decide_alerts(session, run_id, score, notify, done)
        run = run_repo.run_by_id(session, run_id, None)
        status = run.status if run else "missing"
        finalization_repo.complete(session, run_id, done, status)
        return Finalized(True, status, outcome, score)

    return in_transaction(sessions, decide)


def _claim(session: Session, run_id: int, now: datetime, stale: datetime) -> bool:
    existing = finalization_repo.finalization_of(session, run_id)
    if existing is None and not ready_to_finalize(session, run_id):
        return False
    if existing is not None and existing.completed_at is not None:
        return False
    return finalization_repo.claim(session, run_id, now, stale)
