"""SQL the fan-out and the sweeper ask about runs: what is left, what stalled, what to finish."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import Session

from plumbline.models import EvalRun, EvalRunFinalization, EvalSample

IN_FLIGHT = ("pending", "running")


def in_flight_count(session: Session, run_id: int) -> int:
    """The run's samples still pending or running."""
    query = select(func.count()).where(
        EvalSample.run_id == run_id, EvalSample.status.in_(IN_FLIGHT)
    )
    return int(session.scalar(query) or 0)


def _orphaned(lease_expired_before: datetime) -> object:
    return or_(
        EvalSample.status == "pending",
        and_(
            EvalSample.status == "running",
            or_(EvalSample.claimed_at.is_(None), EvalSample.claimed_at < lease_expired_before),
        ),
    )


def stalled_runs(
    session: Session, quiet_since: datetime, lease_expired_before: datetime
) -> list[int]:
    """Running runs with work nobody holds and no sample claimed or finished since `quiet_since`."""
    recent = exists().where(
        EvalSample.run_id == EvalRun.id,
        or_(EvalSample.claimed_at >= quiet_since, EvalSample.finished_at >= quiet_since),
    )
    orphaned = exists().where(EvalSample.run_id == EvalRun.id, _orphaned(lease_expired_before))  # type: ignore[arg-type]
    query = select(EvalRun.id).where(
        EvalRun.status == "running",
        or_(EvalRun.started_at.is_(None), EvalRun.started_at < quiet_since),
        ~recent,
        orphaned,
    )
    return list(session.scalars(query.order_by(EvalRun.id)))


def orphaned_sample_ids(session: Session, run_id: int, lease_expired_before: datetime) -> list[int]:
    """The run's pending samples and those whose claim outlived its lease."""
    query = select(EvalSample.id).where(
        EvalSample.run_id == run_id,
        _orphaned(lease_expired_before),  # type: ignore[arg-type]
    )
    return list(session.scalars(query.order_by(EvalSample.id)))


def unfinalized_runs(session: Session, stale_claim_before: datetime) -> list[int]:
    """Runs to finalise: settled but never claimed, or claimed by a worker that vanished."""
    busy = exists().where(EvalSample.run_id == EvalRun.id, EvalSample.status.in_(IN_FLIGHT))
    any_claim = exists().where(EvalRunFinalization.run_id == EvalRun.id)
    settled = select(EvalRun.id).where(EvalRun.status == "running", ~busy, ~any_claim)
    abandoned = select(EvalRunFinalization.run_id).where(
        EvalRunFinalization.completed_at.is_(None),
        EvalRunFinalization.claimed_at < stale_claim_before,
    )
    return sorted(set(session.scalars(settled)) | set(session.scalars(abandoned)))


def unstarted_queued_runs(session: Session, created_before: datetime) -> list[int]:
    """Scheduled and API runs still pending a while after their creation (their start was lost).

    CLI runs are left alone: the CLI executes them itself.
    """
    query = select(EvalRun.id).where(
        EvalRun.status == "pending",
        EvalRun.trigger.in_(("schedule", "api")),
        EvalRun.created_at < created_before,
    )
    return list(session.scalars(query.order_by(EvalRun.id)))
