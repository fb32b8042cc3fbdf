"""Usage per hour or day and (team, feature, model, endpoint): counts, tokens, cost, latency."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Float, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class UsageRollup(Base):
    """One period's usage of one (feature, model, endpoint) by one team, or by all teams."""

    __tablename__ = "usage_rollups"
    __table_args__ = (Index("ix_usage_rollups_period", "period_hours", "period_start"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    period_start: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    period_hours: Mapped[int] = mapped_column(Integer)  # 1 or 24
    # All-teams rows let an admin's view read one row per (feature, model) instead of eight.
    all_teams: Mapped[bool] = mapped_column(Boolean)
    team_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    feature: Mapped[str | None] = mapped_column(String(128), nullable=True)
    model: Mapped[str | None] = mapped_column(String(256), nullable=True)
    # The call kind's route; None on rows rolled up before endpoints were (see the migration).
    endpoint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    calls: Mapped[int] = mapped_column(BigInteger)
    errors: Mapped[int] = mapped_column(BigInteger)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger)
    completion_tokens: Mapped[int] = mapped_column(BigInteger)
    input_cost: Mapped[float] = mapped_column(Float)
    output_cost: Mapped[float] = mapped_column(Float)
    # Sparse log-scale histograms (gateway.usage.latency_histogram).
    ttft_hist: Mapped[bytes] = mapped_column(LargeBinary)
    itl_hist: Mapped[bytes] = mapped_column(LargeBinary)
    e2e_hist: Mapped[bytes] = mapped_column(LargeBinary)
