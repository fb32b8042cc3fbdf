"""SQL for suites and their questions."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from plumbline.models import EvalQuestion, EvalSuite, Team


def suite_by_id(session: Session, suite_id: int, team_id: int | None) -> EvalSuite | None:
    """A suite by id, if the team (None: any team) may see it."""
    query = select(EvalSuite).where(EvalSuite.id == suite_id)
    if team_id is not None:
        query = query.where(EvalSuite.team_id == team_id)
    return session.scalar(query)


def suites_named(session: Session, name: str, team_id: int | None) -> list[EvalSuite]:
    """Suites with this name (one per team), restricted to a team unless None."""
    query = select(EvalSuite).where(EvalSuite.name == name)
    if team_id is not None:
        query = query.where(EvalSuite.team_id == team_id)
    return list(session.scalars(query.order_by(EvalSuite.id)))


def list_suites(session: Session, team_id: int | None) -> list[tuple[EvalSuite, str]]:
    """Suites with their team names, by team then name."""
    query = select(EvalSuite, Team.name).join(Team, Team.id == EvalSuite.team_id)
    if team_id is not None:
        query = query.where(EvalSuite.team_id == team_id)
    rows = session.execute(query.order_by(Team.name, EvalSuite.name)).all()
    return [(row[0], row[1]) for row in rows]


def team_name(session: Session, team_id: int) -> str:
    """The name of a team."""
    name = session.scalar(select(Team.name).where(Team.id == team_id))
    if name is None:
        raise LookupError(f"no team with id {team_id}")
    return name


def add_suite(session: Session, suite: EvalSuite) -> EvalSuite:
    """Insert a suite."""
    session.add(suite)
    session.flush()
    return suite


def questions_of(
    session: Session, suite_id: int, *, include_retired: bool = False
) -> list[EvalQuestion]:
    """A suite's questions in suite order (active ones unless asked otherwise)."""
    query = select(EvalQuestion).where(EvalQuestion.suite_id == suite_id)
    if not include_retired:
        query = query.where(EvalQuestion.retired_at.is_(None))
    return list(session.scalars(query.order_by(EvalQuestion.position, EvalQuestion.id)))


def questions_by_ids(session: Session, ids: list[int]) -> dict[int, EvalQuestion]:
    """Questions by id."""
    if not ids:
        return {}
    rows = session.scalars(select(EvalQuestion).where(EvalQuestion.id.in_(ids)))
    return {q.id: q for q in rows}


def add_question(session: Session, question: EvalQuestion) -> EvalQuestion:
    """Insert a question."""
    session.add(question)
    session.flush()
    return question


def question_counts(session: Session, suite_ids: list[int]) -> dict[int, int]:
    """Active questions per suite."""
    if not suite_ids:
        return {}
    rows = session.execute(
        select(EvalQuestion.suite_id, func.count())
        .where(EvalQuestion.suite_id.in_(suite_ids), EvalQuestion.retired_at.is_(None))
        .group_by(EvalQuestion.suite_id)
    ).all()
    return {int(suite_id): int(count) for suite_id, count in rows}
