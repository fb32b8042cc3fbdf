"""The logprobs of a call in a compact encoding, exactly as the backend sent them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, LargeBinary, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class CallLogprobs(Base):
    """Companion row of `calls` holding sampled tokens, logprobs and top-k alternatives."""

    __tablename__ = "call_logprobs"
    __table_args__ = ({"postgresql_partition_by": "RANGE (created_at)"},)

    call_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    # The team's retention class when the call was written (0: kept until deleted); on
    # Postgres each day partition is split by it, so a class's expired days are dropped whole.
    retention_days: Mapped[int] = mapped_column(
        SmallInteger, primary_key=True, default=0, server_default="0"
    )
    team_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    format: Mapped[str] = mapped_column(String(16))
    token_count: Mapped[int] = mapped_column(Integer)
    top_k: Mapped[int] = mapped_column(Integer)
    # v2 rows: sampled tokens and logprobs here, top-k alternatives in `topk` (None when the
    # call had none, or once the team's top-k retention dropped them); v1 rows: all in payload.
    payload: Mapped[bytes] = mapped_column(LargeBinary)
    topk: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
