"""SQL for paraphrases: the review queue, statuses and the approved (frozen) sets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from plumbline.models import EvalParaphrase, EvalQuestion


def paraphrases_of_suite(
    session: Session, suite_id: int, *, status: str | None = None
) -> list[tuple[EvalParaphrase, str]]:
    """A suite's paraphrases with their question keys, by question order then id."""
    query = (
        select(EvalParaphrase, EvalQuestion.key)
        .join(EvalQuestion, EvalQuestion.id == EvalParaphrase.question_id)
        .where(EvalQuestion.suite_id == suite_id, EvalQuestion.retired_at.is_(None))
    )
    if status is not None:
        query = query.where(EvalParaphrase.status == status)
    query = query.order_by(EvalQuestion.position, EvalParaphrase.id)
    return [(row[0], row[1]) for row in session.execute(query).all()]


def paraphrases_of_question(session: Session, question_id: int) -> list[EvalParaphrase]:
    """Every paraphrase of a question, oldest first."""
    query = select(EvalParaphrase).where(EvalParaphrase.question_id == question_id)
    return list(session.scalars(query.order_by(EvalParaphrase.id)))


def paraphrases_by_ids(
    session: Session, ids: Collection[int], team_id: int | None
) -> list[EvalParaphrase]:
    """Paraphrases by id that the team (None: any) may see."""
    if not ids:
        return []
    query = select(EvalParaphrase).where(EvalParaphrase.id.in_(list(ids)))
    if team_id is not None:
        query = query.where(EvalParaphrase.team_id == team_id)
    return list(session.scalars(query))


def add_paraphrase(session: Session, paraphrase: EvalParaphrase) -> EvalParaphrase:
    """Insert a paraphrase."""
    session.add(paraphrase)
    session.flush()
    return paraphrase


def set_status(
    session: Session, ids: Collection[int], status: str, reviewed_at: datetime | None
) -> None:
    """Move paraphrases to a review status."""
    if ids:
        session.execute(
            update(EvalParaphrase)
            .where(EvalParaphrase.id.in_(list(ids)))
            .values(status=status, reviewed_at=reviewed_at)
        )


def retire_generated(session: Session, question_id: int) -> int:
    """Mark a question's generated paraphrases stale (its wording changed); returns how many."""
    result = session.execute(
        update(EvalParaphrase)
        .where(
            EvalParaphrase.question_id == question_id,
            EvalParaphrase.source == "generated",
            EvalParaphrase.status.in_(("pending", "approved")),
        )
        .values(status="stale")
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def approved_sets(
    session: Session, question_ids: Collection[int]
) -> dict[int, list[EvalParaphrase]]:
    """Approved paraphrases per question, oldest approval first (so new ones only append)."""
    found: dict[int, list[EvalParaphrase]] = defaultdict(list)
    if not question_ids:
        return found
    query = (
        select(EvalParaphrase)
        .where(
            EvalParaphrase.question_id.in_(list(question_ids)),
            EvalParaphrase.status == "approved",
        )
        .order_by(EvalParaphrase.question_id, EvalParaphrase.reviewed_at, EvalParaphrase.id)
    )
    for paraphrase in session.scalars(query):
        found[paraphrase.question_id].append(paraphrase)
    return found


def status_counts(session: Session, suite_id: int) -> dict[tuple[str, str], int]:
    """(question key, status) -> number of paraphrases, over the suite's active questions."""
    rows = session.execute(
        select(EvalQuestion.key, EvalParaphrase.status, func.count())
        .join(EvalQuestion, EvalQuestion.id == EvalParaphrase.question_id)
        .where(EvalQuestion.suite_id == suite_id, EvalQuestion.retired_at.is_(None))
        .group_by(EvalQuestion.key, EvalParaphrase.status)
    ).all()
    return {(str(key), str(status)): int(n) for key, status, n in rows}
