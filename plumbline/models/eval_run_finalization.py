"""Run finalisation claims: who scores and alerts a run, so that happens exactly once."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class EvalRunFinalization(Base):
    """A claim on scoring and alerting a run; a stale, incomplete claim may be taken over."""

    __tablename__ = "eval_run_finalizations"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("eval_runs.id", ondelete="CASCADE"), primary_key=True
    )
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    claims: Mapped[int] = mapped_column(Integer, default=1)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The run's status after scoring (completed, partial, failed).
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)
