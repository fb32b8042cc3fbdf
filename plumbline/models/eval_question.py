"""Eval questions: one row per question id of a suite, kept (retired) when the suite drops it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class EvalQuestion(Base):
    """A suite question; the row id stays stable across suite updates (matched by `key`)."""

    __tablename__ = "eval_questions"
    __table_args__ = (UniqueConstraint("suite_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite_id: Mapped[int] = mapped_column(
        ForeignKey("eval_suites.id", ondelete="CASCADE"), index=True
    )
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(128))
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    # The question as the suite schema dumps it to JSON (answer spec, expected, context, ...).
    spec: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
