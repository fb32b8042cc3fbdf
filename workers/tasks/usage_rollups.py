"""Usage rollup task: beat ticks it every minute; it rolls up finished hours and days."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gateway.usage.rollup_job import run_rollups
from workers.app import named_task, runtime_of


@named_task("usage.rollup")
def rollup(self: Any) -> dict[str, int]:
    """Roll up every finished hour and day not rolled yet, and redo those that took late calls."""
    runtime = runtime_of(self.app)
    report = run_rollups(runtime.sessions(), datetime.now(UTC))
    return {"hours": report.hours, "days": report.days}
