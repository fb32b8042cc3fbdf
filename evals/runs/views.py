"""Runs as the CLI and the API show them: one declaration, the API's response models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class RunView(BaseModel):
    """A run: status, sample counts and, once scored, its summary."""

    model_config = ConfigDict(frozen=True)

    id: int
    suite_id: int
    suite: str
    status: str
    trigger: str
    model: str
    n_samples: int
    samples: dict[str, int]
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    scheduled_for: datetime | None
    baseline_run_id: int | None
    summary: dict[str, Any] | None
    error: str | None
    # The run's trace (run span and one span per question) in the tracing backend.
    trace_id: str | None = None


class RunDetail(RunView):
    """A run with its per-question results and first-divergent-token reports."""

    questions: list[dict[str, Any]]
