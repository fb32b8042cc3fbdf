"""SQL for alert state, evaluations, alerts and their events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from plumbline.models import Alert, AlertEvaluation, AlertEvent, AlertStateRow, EvalSuite, Team

OPEN = ("firing", "acknowledged")


def locked_state(session: Session, suite_id: int, team_id: int) -> AlertStateRow:
    """The suite's alert state row, created if missing, locked until the transaction ends."""
    if session.get(AlertStateRow, suite_id) is None:
        try:
            with session.begin_nested():
                session.add(AlertStateRow(suite_id=suite_id, team_id=team_id, state={}))
                session.flush()
        except IntegrityError:
            pass  # another worker created it first
    query = select(AlertStateRow).where(AlertStateRow.suite_id == suite_id).with_for_update()
    row = session.execute(query.execution_options(populate_existing=True)).scalar_one()
    return row


def evaluation_of_run(session: Session, run_id: int) -> AlertEvaluation | None:
    """The alert decision already taken for a run, if any."""
    return session.scalar(select(AlertEvaluation).where(AlertEvaluation.run_id == run_id))


def add(session: Session, row: Any) -> Any:
    """Insert a row and return it with its id."""
    session.add(row)
    session.flush()
    return row


def open_alert(session: Session, suite_id: int, rule: str) -> Alert | None:
    """The firing or acknowledged alert of a suite's rule, if any."""
    query = select(Alert).where(
        Alert.suite_id == suite_id, Alert.rule == rule, Alert.status.in_(OPEN)
    )
    return session.scalar(query.order_by(Alert.id.desc()).limit(1))


def alert_by_id(session: Session, alert_id: int, team_id: int | None) -> Alert | None:
    """An alert, if the team (None: any) may see it."""
    query = select(Alert).where(Alert.id == alert_id)
    if team_id is not None:
        query = query.where(Alert.team_id == team_id)
    return session.scalar(query)


def list_alerts(
    session: Session,
    team_id: int | None,
    statuses: Sequence[str],
    suite_id: int | None,
    limit: int,
) -> list[tuple[Alert, str, str]]:
    """Alerts newest first, with suite and team names."""
    query = (
        select(Alert, EvalSuite.name, Team.name)
        .join(EvalSuite, EvalSuite.id == Alert.suite_id)
        .join(Team, Team.id == Alert.team_id)
        .where(Alert.status.in_(list(statuses)))
    )
    if team_id is not None:
        query = query.where(Alert.team_id == team_id)
    if suite_id is not None:
        query = query.where(Alert.suite_id == suite_id)
    rows = session.execute(query.order_by(Alert.id.desc()).limit(limit)).all()
    return [(row[0], row[1], row[2]) for row in rows]


def events_of(session: Session, alert_id: int) -> list[AlertEvent]:
    """An alert's history, oldest first."""
    query = select(AlertEvent).where(AlertEvent.alert_id == alert_id)
    return list(session.scalars(query.order_by(AlertEvent.id)))


def update_alert(session: Session, alert_id: int, **values: Any) -> None:
    """Set columns of an alert."""
    session.execute(update(Alert).where(Alert.id == alert_id).values(**values))


def state_rows(session: Session) -> list[tuple[AlertStateRow, str, str]]:
    """Every suite's alert state with suite and team names (for metrics)."""
    query = (
        select(AlertStateRow, EvalSuite.name, Team.name)
        .join(EvalSuite, EvalSuite.id == AlertStateRow.suite_id)
        .join(Team, Team.id == AlertStateRow.team_id)
    )
    return [(row[0], row[1], row[2]) for row in session.execute(query).all()]


def touch(row: AlertStateRow, state: dict[str, Any], run_id: int | None, now: datetime) -> None:
    """Store a new state on a locked state row."""
    row.state = state
    if run_id is not None:
        row.last_run_id = run_id
    row.updated_at = now
