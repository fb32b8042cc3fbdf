"""A run the API recorded but could not hand to the workers: marked failed, resumable."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from evals.runs.repository import runs as run_repo


def fail_unqueued(session: Session, run_id: int, reason: str) -> bool:
    """Mark a still-pending run failed with `reason`; False if a worker already started it.

    Failed, not left pending: the caller was told 503, so the run must not start on its own
    later (a retried request would then run twice); `resume` starts it when the broker is back.
    """
    return run_repo.update_if_status(
        session,
        run_id,
        "pending",
        status="failed",
        error=reason[:2000],
        finished_at=datetime.now(UTC),
    )
