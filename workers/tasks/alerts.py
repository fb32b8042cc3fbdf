"""Notification task: one delivery attempt per message; a failure schedules the next attempt."""

from __future__ import annotations

from typing import Any

from evals.alerts.delivery import deliver as deliver_once
from workers.app import enqueue, named_task, runtime_of


@named_task("alerts.deliver")
def deliver(self: Any, notification_id: int) -> str:
    """POST the notification to its channel and record the attempt; retry with backoff."""
    runtime = runtime_of(self.app)
    outcome = deliver_once(
        runtime.sessions(), notification_id, runtime.settings.worker.notify, runtime.http()
    )
    if outcome.retry_in_s is not None:
        enqueue(self.app, "alerts.deliver", notification_id, countdown=outcome.retry_in_s)
    return outcome.status
