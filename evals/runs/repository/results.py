"""SQL for scored question results of a run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from plumbline.models import EvalQuestionResult


def replace_results(session: Session, run_id: int, rows: Iterable[dict[str, Any]]) -> None:
    """Write a run's question results, replacing any from an earlier scoring of the run."""
    session.execute(delete(EvalQuestionResult).where(EvalQuestionResult.run_id == run_id))
    batch = list(rows)
    if batch:
        session.execute(insert(EvalQuestionResult), batch)


def results_of_run(session: Session, run_id: int) -> list[EvalQuestionResult]:
    """A run's question results in question-key order."""
    query = select(EvalQuestionResult).where(EvalQuestionResult.run_id == run_id)
    return list(session.scalars(query.order_by(EvalQuestionResult.question_key)))
