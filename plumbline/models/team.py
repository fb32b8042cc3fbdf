"""Teams: the unit of attribution, access and data retention."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Boolean, DateTime, Float, Integer, Numeric, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


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
    # Spend budgets per UTC day and month in the price currency (NULL: none), and the fraction
    # of each at which a notice goes out (NULL: 0.8).
    budget_day: Mapped[Decimal | None] = mapped_column(Numeric(18, 6), nullable=True)
    budget_month: Mapped[Decimal | None] = mapped_column(Numeric(18, 6), nullable=True)
    budget_soft_fraction: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Model names or fnmatch patterns its keys may call (NULL: every configured model).
    allowed_models: Mapped[list[str] | None] = mapped_column(JsonDocument, nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
