"""Alert notifications: one delivery of one alert event to one channel, with every attempt."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class AlertNotification(Base):
    """A message for a channel; delivered by its own task, retried with backoff, recorded."""

    __tablename__ = "alert_notifications"
    __table_args__ = (
        UniqueConstraint("event_id", "channel"),
        Index("ix_alert_notifications_status_next", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"), index=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("alert_events.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    # The channel's name; its URL is resolved at delivery, so secrets stay out of the database.
    channel: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(16))
    # pending -> sending -> delivered | retrying | failed
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Every attempt: {at, status_code, error, ms}.
    attempt_log: Mapped[list[dict[str, Any]]] = mapped_column(JsonDocument)
    payload: Mapped[dict[str, Any] | list[Any]] = mapped_column(JsonDocument)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
