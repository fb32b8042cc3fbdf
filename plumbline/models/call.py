"""One row per proxied call: who, what, how long each phase took, tokens, cost, logprob summary."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class Call(Base):
    """A call through the gateway, written by the log sink (by day, then retention class, on PG)."""

    __tablename__ = "calls"
    __table_args__ = (
        Index("ix_calls_team_created", "team_id", "created_at"),
        Index("ix_calls_feature_created", "feature", "created_at"),
        Index("ix_calls_request_id", "request_id"),
        Index("ix_calls_trace_id", "trace_id"),
        # Rows arrive in time order, so a BRIN index (a few pages per million rows) narrows any
        # time range to its block ranges: the usage endpoint's edges and the panels' windows.
        Index("ix_calls_created_brin", "created_at", postgresql_using="brin"),
        {"postgresql_partition_by": "RANGE (created_at)"},
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    # The team's retention class when the call was written (0: kept until deleted); on
    # Postgres each day partition is split by it, so a class's expired days are dropped whole.
    retention_days: Mapped[int] = mapped_column(
        SmallInteger, primary_key=True, default=0, server_default="0"
    )
    request_id: Mapped[str] = mapped_column(String(128))
    # The W3C trace the call belongs to and the gateway's span in it (None: tracing was off).
    trace_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    team_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    key_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    feature: Mapped[str | None] = mapped_column(String(128), nullable=True)
    end_user: Mapped[str | None] = mapped_column(String(256), nullable=True)
    source: Mapped[str] = mapped_column(String(16), default="product")
    endpoint: Mapped[str] = mapped_column(String(64))
    model: Mapped[str | None] = mapped_column(String(256), nullable=True)
    backend: Mapped[str | None] = mapped_column(String(512), nullable=True)
    stream: Mapped[bool] = mapped_column(Boolean, default=False)
    n: Mapped[int | None] = mapped_column(Integer, nullable=True)
    temperature: Mapped[float | None] = mapped_column(Float, nullable=True)
    top_p: Mapped[float | None] = mapped_column(Float, nullable=True)
    seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    max_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Inputs, documents or pairs of an embeddings, pooling, classify, score or rerank call.
    items: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status_code: Mapped[int] = mapped_column(Integer)
    cancelled: Mapped[bool] = mapped_column(Boolean, default=False)
    error_type: Mapped[str | None] = mapped_column(String(128), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Why load shedding refused the call (eval, live_sample, over_fair_share); NULL: it did not.
    shed_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    finish_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # The backend's response `id` and the model it says answered (cut to 256 by the gateway).
    response_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
    response_model: Mapped[str | None] = mapped_column(String(256), nullable=True)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cached_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    usage_source: Mapped[str | None] = mapped_column(String(16), nullable=True)
    ttft_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    decode_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    itl_mean_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    itl_p50_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    itl_p95_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    itl_max_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    e2e_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    overhead_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    engine_queue_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    engine_prefill_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    engine_decode_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    engine_itl_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    input_cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Speech-to-text calls: seconds of audio taken in (priced per minute into input_cost).
    audio_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    output_cost: Mapped[float | None] = mapped_column(Float, nullable=True)
    flops_estimate: Mapped[float | None] = mapped_column(Float, nullable=True)
    decode_floor_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    logprob_mode: Mapped[str | None] = mapped_column(String(32), nullable=True)
    logprob_mean: Mapped[float | None] = mapped_column(Float, nullable=True)
    logprob_min_margin: Mapped[float | None] = mapped_column(Float, nullable=True)
    near_ties: Mapped[int | None] = mapped_column(Integer, nullable=True)
