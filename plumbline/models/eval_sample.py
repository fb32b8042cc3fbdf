"""Eval samples: one gateway call of a run, created pending up front so a run can resume."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import BigId


class EvalSample(Base):
    """A sample slot (run, question, paraphrase, sample index) and, once done, its answer."""

    __tablename__ = "eval_samples"
    __table_args__ = (
        UniqueConstraint(
            "run_id", "question_id", "paraphrase_index", "sample_index", name="uq_eval_samples_slot"
        ),
        Index("ix_eval_samples_run_status", "run_id", "status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("eval_runs.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(
        ForeignKey("eval_questions.id", ondelete="CASCADE"), index=True
    )
    paraphrase_index: Mapped[int] = mapped_column(Integer)
    # NULL for paraphrase 0, the canonical wording (taken from the run's suite snapshot).
    paraphrase_id: Mapped[int | None] = mapped_column(
        ForeignKey("eval_paraphrases.id", ondelete="SET NULL"), nullable=True
    )
    sample_index: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The gateway's `calls.id` (no FK: calls is partitioned by day on a composite key).
    call_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    text: Mapped[str | None] = mapped_column(Text, nullable=True)
    finish_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    answer_key: Mapped[str | None] = mapped_column(Text, nullable=True)
    parse_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
