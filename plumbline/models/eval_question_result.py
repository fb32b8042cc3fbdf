"""Scored questions of a run: the fixed-dtype question table of `evals.scoring`, one row each."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class EvalQuestionResult(Base):
    """One row of `RunScore.questions` (column for column), plus the full divergence report."""

    __tablename__ = "eval_question_results"
    __table_args__ = (UniqueConstraint("run_id", "question_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("eval_runs.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int | None] = mapped_column(
        ForeignKey("eval_questions.id", ondelete="SET NULL"), nullable=True, index=True
    )
    question_key: Mapped[str] = mapped_column(String(128))
    n_samples: Mapped[int] = mapped_column(Integer)
    n_paraphrases: Mapped[int] = mapped_column(Integer)
    n_answers: Mapped[int] = mapped_column(Integer)
    modal_answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    modal_count: Mapped[int] = mapped_column(Integer)
    agreement: Mapped[float] = mapped_column(Float)
    agreement_lower: Mapped[float] = mapped_column(Float)
    agreement_upper: Mapped[float] = mapped_column(Float)
    modal_tie: Mapped[bool] = mapped_column(Boolean)
    pairwise_agreement: Mapped[float | None] = mapped_column(Float, nullable=True)
    entropy: Mapped[float | None] = mapped_column(Float, nullable=True)
    entropy_normalised: Mapped[float | None] = mapped_column(Float, nullable=True)
    parse_failures: Mapped[int] = mapped_column(Integer)
    parse_failure_rate: Mapped[float] = mapped_column(Float)
    expected_answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    accuracy: Mapped[float | None] = mapped_column(Float, nullable=True)
    paraphrases_breaking: Mapped[int] = mapped_column(Integer)
    worst_paraphrase: Mapped[int] = mapped_column(Integer)
    worst_paraphrase_share: Mapped[float] = mapped_column(Float)
    critical: Mapped[bool] = mapped_column(Boolean)
    max_prompt_fraction: Mapped[float | None] = mapped_column(Float, nullable=True)
    context_near_limit: Mapped[bool] = mapped_column(Boolean)
    output_truncated: Mapped[bool] = mapped_column(Boolean)
    context_truncated: Mapped[bool] = mapped_column(Boolean)
    context_flag: Mapped[bool] = mapped_column(Boolean)
    divergence_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    divergence_margin: Mapped[float | None] = mapped_column(Float, nullable=True)
    divergence_verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    divergence_explanation: Mapped[str | None] = mapped_column(Text, nullable=True)
    repeatability: Mapped[str | None] = mapped_column(String(32), nullable=True)
    flags: Mapped[str | None] = mapped_column(String(256), nullable=True)
    # The whole DivergenceReport (branches with their answers), for reports and the API.
    divergence: Mapped[dict[str, Any] | None] = mapped_column(JsonDocument, nullable=True)
