"""Audit log: who changed keys, limits, retention, or deleted an end user's data, and when."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


class AuditEntry(Base):
    """One administrative action; never updated, and kept when the team it names is gone."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_action_created", "action", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    # "key <prefix>" for API callers, "cli" for the command line, "retention" for the job.
    actor: Mapped[str] = mapped_column(String(160))
    action: Mapped[str] = mapped_column(String(64))
    # No foreign key: the entry must outlive the team and key it is about.
    team_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    target: Mapped[str | None] = mapped_column(String(256), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
