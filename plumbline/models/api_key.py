"""API keys: only a salted hash is stored; the prefix finds the row without a scan."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, Numeric, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import JsonDocument


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
    # Comma-separated scopes (gateway/auth/scopes.py); NULL: a key older than scopes, which keeps
    # inference, read and evals. Admin keys hold every scope whatever this says.
    scopes: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The key stops working then (401 naming the time); NULL: it never expires.
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Written in batches by each gateway process, so it lags the last call by up to a flush.
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The owner's note: who holds the key and what for.
    note: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # Narrows the team's model list further: a call needs both (NULL: the team's list alone).
    allowed_models: Mapped[list[str] | None] = mapped_column(JsonDocument, nullable=True)
