"""Response models of the JSON endpoints the dashboard page adds to the read API."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class CallerOut(BaseModel):
    """Who the presented key belongs to and what it may see."""

    key_id: int
    team_id: int
    team: str
    admin: bool


class TrafficPoint(BaseModel):
    """One time bucket: calls, errors and latency percentiles of the calls it holds."""

    t: datetime
    calls: int
    errors: int
    ttft_p50_ms: float | None = None
    ttft_p95_ms: float | None = None
    e2e_p50_ms: float | None = None
    e2e_p95_ms: float | None = None


class TrafficReport(BaseModel):
    """Every bucket of the window, empty ones included, oldest first."""

    since: datetime
    until: datetime
    step_s: int
    feature: str | None
    source: str | None
    data: list[TrafficPoint]


class SampleOut(BaseModel):
    """One sample of a question: its wording, answer text, parsed answer and call."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    paraphrase_index: int
    sample_index: int
    status: str
    text: str | None
    answer_key: str | None
    parse_error: str | None
    error: str | None
    finish_reason: str | None
    completion_tokens: int | None
    call_id: str | None


class QuestionSamples(BaseModel):
    """A question of a run: the wordings it was asked in, and every sample."""

    run_id: int
    question_key: str
    wordings: list[str]
    samples: list[SampleOut]
