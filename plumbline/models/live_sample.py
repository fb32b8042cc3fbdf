"""Live samples: production calls picked for resampling, and the agreement they showed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base
from plumbline.db.types import BigId, JsonDocument


class LiveSample(Base):
    """A sampled call (written by the gateway's log sink), re-asked n times by a worker."""

    __tablename__ = "live_samples"
    __table_args__ = (
        Index("ix_live_samples_status_created", "status", "created_at"),
        Index("ix_live_samples_feature_finished", "feature", "finished_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    # The original call's `calls.id` (no FK: calls is partitioned by day).
    call_id: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    feature: Mapped[str] = mapped_column(String(128))
    model: Mapped[str] = mapped_column(String(256))
    endpoint: Mapped[str] = mapped_column(String(64))
    # The client's request (made non-streaming) and first answer; cleared once resampled
    # unless the team stores bodies.
    request: Mapped[dict[str, Any] | None] = mapped_column(JsonDocument, nullable=True)
    original_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    keep_texts: Mapped[bool] = mapped_column(Boolean, default=False)
    answer_spec: Mapped[dict[str, Any] | None] = mapped_column(JsonDocument, nullable=True)
    resamples: Mapped[int] = mapped_column(Integer)
    priority: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # pending -> queued -> running -> done | failed
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    queued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    original_key: Mapped[str | None] = mapped_column(Text, nullable=True)
    # One entry per resample: its answer key (None when it failed to parse or to answer).
    answer_keys: Mapped[list[str | None] | None] = mapped_column(JsonDocument, nullable=True)
    call_ids: Mapped[list[str | None] | None] = mapped_column(JsonDocument, nullable=True)
    n_answered: Mapped[int | None] = mapped_column(Integer, nullable=True)
    n_agreeing: Mapped[int | None] = mapped_column(Integer, nullable=True)
    agreement: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
