"""Eval runs: one execution of a suite, with a snapshot of the suite and its scored summary."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class EvalRun(Base):
    """A run: questions x frozen paraphrases x samples, then scores (see eval_question_results)."""

    __tablename__ = "eval_runs"
    # A scheduled slot can only ever start one run; manual runs leave scheduled_for NULL.
    __table_args__ = (
        UniqueConstraint("suite_id", "scheduled_for"),
        Index("ix_eval_runs_suite_created", "suite_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite_id: Mapped[int] = mapped_column(ForeignKey("eval_suites.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16))
    trigger: Mapped[str] = mapped_column(String(16))
    scheduled_for: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    suite_revision: Mapped[int] = mapped_column(Integer)
    # The whole suite (questions included) as it was when the run was created.
    definition: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
    model: Mapped[str] = mapped_column(String(256))
    max_model_len: Mapped[int | None] = mapped_column(Integer, nullable=True)
    n_samples: Mapped[int] = mapped_column(Integer)
    baseline_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("eval_runs.id", ondelete="SET NULL"), nullable=True
    )
    summary: Mapped[dict[str, Any] | None] = mapped_column(JsonDocument, nullable=True)
    paraphrase_scores: Mapped[list[dict[str, Any]] | None] = mapped_column(
        JsonDocument, nullable=True
    )
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The run's trace and its root (run) span, made at creation; question spans are derived.
    trace_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
