"""Prompt and response bodies, kept only for teams that opted in, redacted before storage."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class CallBody(Base):
    """The request and response of a call, stored when its team opted in."""

    __tablename__ = "call_bodies"
    __table_args__ = ({"postgresql_partition_by": "RANGE (created_at)"},)

    call_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    # The team's retention class when the call was written (0: kept until deleted); on
    # Postgres each day partition is split by it, so a class's expired days are dropped whole.
    retention_days: Mapped[int] = mapped_column(
        SmallInteger, primary_key=True, default=0, server_default="0"
    )
    team_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_user: Mapped[str | None] = mapped_column(String(256), nullable=True)
    request_body: Mapped[str] = mapped_column(Text)
    response_body: Mapped[str | None] = mapped_column(Text, nullable=True)
