"""Which hours and days are rolled up, and which took late rows since (dirty)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, Integer
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class UsageRollupPeriod(Base):
    """A period the rollup job has handled; dirty once calls were written into it afterwards."""

    __tablename__ = "usage_rollup_periods"

    period_hours: Mapped[int] = mapped_column(Integer, primary_key=True)
    period_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    dirty: Mapped[bool] = mapped_column(Boolean, default=False)
