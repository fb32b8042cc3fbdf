"""Alert state per suite: the alert state machine's counters carried from run to run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class AlertStateRow(Base):
    """`evals.alerting.AlertState` of one suite, as JSON, and the last run it has seen."""

    __tablename__ = "alert_states"

    suite_id: Mapped[int] = mapped_column(
        ForeignKey("eval_suites.id", ondelete="CASCADE"), primary_key=True
    )
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    state: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
    last_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("eval_runs.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
