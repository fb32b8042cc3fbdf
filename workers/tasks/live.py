"""Live-traffic stability tasks: queue sampled calls, re-ask one n times at low priority."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evals.live_sampling.resampling import claim_job, queue_pending, store_outcome
from evals.transaction import in_transaction
from workers.app import enqueue, named_task, runtime_of


@named_task("live.dispatch_pending")
def dispatch_pending(self: Any) -> int:
    """Queue the live samples the gateway stored since the last tick."""
    runtime = runtime_of(self.app)
    limit = runtime.settings.worker.live_batch
    ids = in_transaction(runtime.sessions(), queue_pending, datetime.now(UTC), limit)
    for sample_id in ids:
        enqueue(self.app, "live.resample", sample_id)
    return len(ids)


@named_task("live.resample")
def resample_call(self: Any, sample_id: int) -> str:
    """Re-send one sampled request and store how often the answers agree with the original."""
    runtime = runtime_of(self.app)
    worker, sessions = runtime.settings.worker, runtime.sessions()
    job = in_transaction(
        sessions,
        claim_job,
        sample_id,
        datetime.now(UTC),
        worker.stall_after_s,
        worker.resample_priority,
    )
    if job is None:
        return "skipped"
    answers = runtime.resample(job)
    in_transaction(sessions, store_outcome, job, answers, datetime.now(UTC))
    return "done"
