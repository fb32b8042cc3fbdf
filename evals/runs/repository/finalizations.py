"""SQL for run finalisation claims: claim, take over a stale claim, complete, reset."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from plumbline.models import EvalRunFinalization


def claim(session: Session, run_id: int, now: datetime, stale_before: datetime) -> bool:
    """Take the run's finalisation: a first claim, or a stale one nobody completed."""
    try:
        with session.begin_nested():
            session.add(EvalRunFinalization(run_id=run_id, claimed_at=now, claims=1))
            session.flush()
        return True
    except IntegrityError:
        pass
    result = session.execute(
        update(EvalRunFinalization)
        .where(
            EvalRunFinalization.run_id == run_id,
            EvalRunFinalization.completed_at.is_(None),
            EvalRunFinalization.claimed_at < stale_before,
        )
        .values(claimed_at=now, claims=EvalRunFinalization.claims + 1)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def complete(session: Session, run_id: int, now: datetime, outcome: str) -> None:
    """Mark the run finalised."""
    session.execute(
        update(EvalRunFinalization)
        .where(EvalRunFinalization.run_id == run_id)
        .values(completed_at=now, outcome=outcome)
    )


def finalization_of(session: Session, run_id: int) -> EvalRunFinalization | None:
    """The run's claim, if any."""
    return session.scalar(select(EvalRunFinalization).where(EvalRunFinalization.run_id == run_id))


def reset(session: Session, run_id: int) -> None:
    """Forget a run's finalisation, so a resumed run is scored again."""
    session.execute(delete(EvalRunFinalization).where(EvalRunFinalization.run_id == run_id))
