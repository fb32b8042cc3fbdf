"""SQL for runs: create, find, list, the previous scored run, status changes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from plumbline.models import EvalRun, EvalSuite

SCORED_STATUSES = ("completed", "partial")


def add_run(session: Session, run: EvalRun) -> EvalRun:
    """Insert a run."""
    session.add(run)
    session.flush()
    return run


def run_by_id(session: Session, run_id: int, team_id: int | None) -> EvalRun | None:
    """A run by id, if the team (None: any) may see it."""
    query = select(EvalRun).where(EvalRun.id == run_id)
    if team_id is not None:
        query = query.where(EvalRun.team_id == team_id)
    return session.scalar(query)


def run_for_slot(session: Session, suite_id: int, scheduled_for: datetime) -> EvalRun | None:
    """The run that took a scheduled slot, if any."""
    return session.scalar(
        select(EvalRun).where(EvalRun.suite_id == suite_id, EvalRun.scheduled_for == scheduled_for)
    )


def list_runs(
    session: Session, team_id: int | None, suite_id: int | None, limit: int
) -> list[tuple[EvalRun, str]]:
    """Newest runs first, with their suite names."""
    query = select(EvalRun, EvalSuite.name).join(EvalSuite, EvalSuite.id == EvalRun.suite_id)
    if team_id is not None:
        query = query.where(EvalRun.team_id == team_id)
    if suite_id is not None:
        query = query.where(EvalRun.suite_id == suite_id)
    rows = session.execute(query.order_by(EvalRun.id.desc()).limit(limit)).all()
    return [(row[0], row[1]) for row in rows]


def previous_scored_run(session: Session, suite_id: int, before_id: int) -> EvalRun | None:
    """The newest scored run of the suite created before `before_id`: the change baseline."""
    return session.scalar(
        select(EvalRun)
        .where(
            EvalRun.suite_id == suite_id,
            EvalRun.id < before_id,
            EvalRun.status.in_(SCORED_STATUSES),
        )
        .order_by(EvalRun.id.desc())
        .limit(1)
    )


def update_run(session: Session, run_id: int, **values: Any) -> None:
    """Set columns of a run."""
    session.execute(update(EvalRun).where(EvalRun.id == run_id).values(**values))


def update_if_status(session: Session, run_id: int, current: str, **values: Any) -> bool:
    """Set columns of a run only while its status is `current`; whether it did."""
    result = session.execute(
        update(EvalRun).where(EvalRun.id == run_id, EvalRun.status == current).values(**values)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]
