"""Response owners: which team and backend each stored Responses API response belongs to."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class ResponseOwner(Base):
    """A response vLLM stores (VLLM_ENABLE_RESPONSES_API_STORE=1): its team, model and backend.

    vLLM keeps stored responses in one server process and checks no owner; this row is what
    the gateway checks before it lets a call retrieve, cancel or chain onto one.
    """

    __tablename__ = "response_owners"
    __table_args__ = (Index("ix_response_owners_team_model", "team_id", "model"),)

    response_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    model: Mapped[str] = mapped_column(String(256))
    backend: Mapped[str] = mapped_column(String(512))
    background: Mapped[bool] = mapped_column(Boolean, default=False)
    # The `top_logprobs` the gateway added upstream (the client asked for none): what a
    # retrieve must strip again. None when nothing was added.
    added_top_logprobs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.current_timestamp()
    )
    # When its usage was recorded: at creation, or (background) by the first call that saw it
    # finished. Null while a background response's tokens are still unrecorded.
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
