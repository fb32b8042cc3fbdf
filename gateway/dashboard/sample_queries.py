"""SQL for one question of a run: its samples in slot order."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from plumbline.models import EvalSample


def samples_of_question(session: Session, run_id: int, question_id: int) -> list[EvalSample]:
    """A run's samples of one question, by paraphrase then sample index."""
    query = (
        select(EvalSample)
        .where(EvalSample.run_id == run_id, EvalSample.question_id == question_id)
        .order_by(EvalSample.paraphrase_index, EvalSample.sample_index)
    )
    return list(session.scalars(query))
