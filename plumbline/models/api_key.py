"""API keys: only a salted hash is stored; the prefix finds the row without a scan."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, Numeric, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class ApiKey(Base):
    """A key a team presents as `Authorization: Bearer <key>`."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128), default="default")
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    salt: Mapped[str] = mapped_column(String(64))
    key_hash: Mapped[str] = mapped_column(String(128))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    # In the future while a rotated key's grace period lasts; the key stops working then.
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Per-key limits, applied on top of the team's (NULL: only the team's limits apply).
    requests_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tokens_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Spend budgets of this key alone per UTC day and month (NULL: only the team's apply).
    budget_day: Mapped[Decimal | None] = mapped_column(Numeric(18, 6), nullable=True)
    budget_month: Mapped[Decimal | None] = mapped_column(Numeric(18, 6), nullable=True)
