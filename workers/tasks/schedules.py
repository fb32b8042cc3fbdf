"""Schedule task: beat ticks it every few seconds; it reads each suite's cron from the database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evals.runs.schedules import create_due_runs
from evals.transaction import in_transaction
from workers.app import enqueue, named_task, runtime_of


@named_task("schedules.dispatch_due_runs")
def dispatch_due_runs(self: Any) -> list[int]:
    """Create the due scheduled runs (one per slot, whoever ticks) and start those created."""
    runtime = runtime_of(self.app)
    grace = runtime.settings.worker.schedule_grace_s
    created = in_transaction(runtime.sessions(), create_due_runs, datetime.now(UTC), grace)
    for run_id in created:
        enqueue(self.app, "evals.start_run", run_id)
    return created
