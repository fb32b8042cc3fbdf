"""Eval paraphrases: generated or hand-written wordings of a question, reviewed before use."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class EvalParaphrase(Base):
    """One wording of a question; runs use only approved ones (status `approved`)."""

    __tablename__ = "eval_paraphrases"
    __table_args__ = (
        UniqueConstraint("question_id", "text_hash"),
        Index("ix_eval_paraphrases_question_status", "question_id", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("eval_questions.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    # SHA-256 of the normalised text: the same wording is never stored (or reviewed) twice.
    text_hash: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    generator_call_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    generator_model: Mapped[str | None] = mapped_column(String(256), nullable=True)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
