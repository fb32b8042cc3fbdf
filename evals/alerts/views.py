"""Alerts as the CLI and the API show them: one declaration, the API's response models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class AlertView(BaseModel):
    """An alert and where it stands."""

    model_config = ConfigDict(frozen=True)

    id: int
    suite_id: int
    suite: str
    team: str
    rule: str
    status: str
    summary: str
    details: dict[str, Any]
    fired_run_id: int | None
    last_run_id: int | None
    resolved_run_id: int | None
    started_at: datetime
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    resolved_at: datetime | None
    # The trace of the run that fired it: its run span and one span per question.
    trace_id: str | None = None


class AlertDetail(AlertView):
    """An alert with its history and notification deliveries."""

    events: list[dict[str, Any]]
    notifications: list[dict[str, Any]]
