"""Response models of the read API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class CallSummary(BaseModel):
    """One call as listed."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    created_at: datetime
    request_id: str
    # The W3C trace id and the gateway's span id (None when tracing was off for the call).
    trace_id: str | None = None
    span_id: str | None = None
    team_id: int | None
    feature: str | None
    end_user: str | None
    source: str
    endpoint: str
    model: str | None
    backend: str | None
    stream: bool
    n: int | None
    temperature: float | None
    top_p: float | None
    seed: int | None
    max_tokens: int | None
    # Inputs, documents or pairs of an embeddings, pooling, classify, score or rerank call.
    items: int | None
    status_code: int
    cancelled: bool
    error_type: str | None
    error_message: str | None
    finish_reason: str | None
    # The backend's response `id` and the model it says answered (None: it sent none).
    response_id: str | None = None
    response_model: str | None = None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    usage_source: str | None
    ttft_ms: float | None
    decode_ms: float | None
    itl_mean_ms: float | None
    itl_p50_ms: float | None
    itl_p95_ms: float | None
    itl_max_ms: float | None
    e2e_ms: float | None
    overhead_ms: float | None
    engine_queue_ms: float | None
    engine_prefill_ms: float | None
    engine_decode_ms: float | None
    engine_itl_ms: float | None
    input_cost: float | None
    output_cost: float | None
    # Speech-to-text calls: seconds of audio taken in (priced per minute into input_cost).
    audio_seconds: float | None = None
    flops_estimate: float | None
    decode_floor_ms: float | None
    logprob_mode: str | None
    logprob_mean: float | None
    logprob_min_margin: float | None
    near_ties: int | None


class CallPage(BaseModel):
    """A page of calls and the cursor of the next one."""

    data: list[CallSummary]
    next_cursor: str | None


class CallLogprobsOut(BaseModel):
    """The logprobs of a call as the backend sent them, per choice index."""

    format: str
    top_k: int
    token_count: int
    choices: dict[int, Any]
    # True once the team's top-k retention dropped the alternatives (they read as `[]`).
    top_logprobs_expired: bool = False


class CallBodyOut(BaseModel):
    """Stored (redacted) request and response of a call."""

    request: str
    response: str | None


class CallDetail(CallSummary):
    """One call with its logprobs and, where stored, its bodies."""

    logprobs: CallLogprobsOut | None = None
    # Why the call has no logprobs, where its API has none (the Anthropic Messages API).
    logprobs_note: str | None = None
    body: CallBodyOut | None = None


class UsageRow(BaseModel):
    """Usage of one (feature, model, endpoint) over the window."""

    feature: str | None
    model: str | None
    # The call kind's route; null for usage rolled up before call kinds were kept apart.
    endpoint: str | None = None
    calls: int
    errors: int
    error_rate: float
    prompt_tokens: int
    completion_tokens: int
    input_cost: float
    output_cost: float
    ttft_p50_ms: float | None = None
    ttft_p95_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p95_ms: float | None = None
    e2e_p50_ms: float | None = None
    e2e_p95_ms: float | None = None


class EndpointUsage(BaseModel):
    """Usage of one call kind (its route) over the window, every feature and model together."""

    endpoint: str | None
    calls: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    input_cost: float = 0.0
    output_cost: float = 0.0
    cost: float = 0.0


class UsageReport(BaseModel):
    """Usage per feature, model and endpoint in a time window, and per endpoint."""

    since: datetime
    until: datetime
    # "exact", or "histogram" when whole hours and days came from the rollups: then each
    # percentile is read from log-scale buckets 5% wide (see gateway.usage.latency_histogram).
    percentiles: Literal["exact", "histogram"] = "exact"
    data: list[UsageRow]
    # Cost per call kind, most expensive first.
    by_endpoint: list[EndpointUsage] = []


class BudgetOut(BaseModel):
    """One budget in its current UTC period; spent and held are None while Redis is down."""

    model_config = ConfigDict(from_attributes=True)

    scope: str
    name: str
    period: str
    period_name: str
    limit: float
    soft_level: float
    spent: float | None
    held: float | None
    resets_at: datetime


class BudgetReport(BaseModel):
    """A team's budgets and its keys' own, with their spend now."""

    team: str
    budgets: list[BudgetOut]
