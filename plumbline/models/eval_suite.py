"""Eval suites: a team's answer-stability suite, its settings and where it came from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class EvalSuite(Base):
    """A suite; its questions live in `eval_questions`, keyed by the suite's own question ids."""

    __tablename__ = "eval_suites"
    __table_args__ = (UniqueConstraint("team_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(256))
    # Every suite field except the questions, as the suite schema dumps it to JSON.
    settings: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
    source_yaml: Mapped[str | None] = mapped_column(Text, nullable=True)
    revision: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
