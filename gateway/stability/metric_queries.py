"""SQL behind the stability gauges: each suite's latest scored run, critical questions, alerts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from plumbline.models import AlertStateRow, EvalQuestionResult, EvalRun, EvalSuite, Team

SCORED = ("completed", "partial")


@dataclass(frozen=True, slots=True)
class LatestRun:
    """A suite's newest scored run and its summary figures."""

    run_id: int
    suite: str
    team: str
    model: str
    summary: dict[str, Any]
    finished_at: datetime | None


def latest_runs(session: Session) -> list[LatestRun]:
    """The newest scored run of every suite."""
    newest = (
        select(func.max(EvalRun.id).label("run_id"))
        .where(EvalRun.status.in_(SCORED))
        .group_by(EvalRun.suite_id)
        .subquery()
    )
    query = (
        select(EvalRun, EvalSuite.name, Team.name)
        .join(newest, newest.c.run_id == EvalRun.id)
        .join(EvalSuite, EvalSuite.id == EvalRun.suite_id)
        .join(Team, Team.id == EvalRun.team_id)
    )
    return [
        LatestRun(run.id, suite, team, run.model, run.summary or {}, run.finished_at)
        for run, suite, team in session.execute(query).all()
    ]


def critical_results(session: Session, run_ids: list[int]) -> list[tuple[int, str, float]]:
    """(run id, question key, agreement) of the critical questions of these runs."""
    if not run_ids:
        return []
    query = select(
        EvalQuestionResult.run_id, EvalQuestionResult.question_key, EvalQuestionResult.agreement
    ).where(EvalQuestionResult.run_id.in_(run_ids), EvalQuestionResult.critical.is_(True))
    return [(int(r), str(q), float(a)) for r, q, a in session.execute(query).all()]


def alert_states(session: Session) -> list[tuple[str, str, dict[str, Any]]]:
    """(suite, team, state JSON) of every suite that has been alert-evaluated."""
    query = (
        select(EvalSuite.name, Team.name, AlertStateRow.state)
        .join(EvalSuite, EvalSuite.id == AlertStateRow.suite_id)
        .join(Team, Team.id == AlertStateRow.team_id)
    )
    return [(str(s), str(t), dict(state or {})) for s, t, state in session.execute(query).all()]
