"""Teams: the unit of attribution, access and data retention."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class Team(Base):
    """A product team whose calls and evals Plumbline keeps apart from other teams'."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    store_bodies: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Days top-k logprob alternatives are kept (None: as long as the call itself).
    topk_retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    requests_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tokens_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
