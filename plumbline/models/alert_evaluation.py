"""Alert evaluations: the one alert decision of each scored run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class AlertEvaluation(Base):
    """What the alert rules decided for one run; unique per run, so a retried task is harmless."""

    __tablename__ = "alert_evaluations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("eval_runs.id", ondelete="CASCADE"), unique=True)
    suite_id: Mapped[int] = mapped_column(
        ForeignKey("eval_suites.id", ondelete="CASCADE"), index=True
    )
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    # "evaluated", "stale" (an older run finished after a newer one) or "unscored".
    outcome: Mapped[str] = mapped_column(String(16))
    decisions: Mapped[list[dict[str, Any]]] = mapped_column(JsonDocument)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
