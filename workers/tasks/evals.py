"""Eval run tasks: start (fan out batches), execute a batch, finalise once, sweep stalls."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from evals.runs.fanout import ready_to_finalize, start_fanout
from evals.runs.finalization import finalize_run as finalize
from evals.runs.start import record_max_model_len
from evals.runs.trace_export import export_run_trace
from evals.sweeps import sweep as find_stalled
from evals.transaction import in_transaction
from workers.app import enqueue, named_task, runtime_of

log = logging.getLogger(__name__)


@named_task("evals.start_run")
def start_run(self: Any, run_id: int, resume: bool = False) -> int:
    """Mark the run running and enqueue one batch task per chunk of unfinished samples."""
    runtime = runtime_of(self.app)
    sessions, size = runtime.sessions(), runtime.settings.worker.batch_size
    chunks = in_transaction(sessions, start_fanout, run_id, size, resume=resume)
    if chunks is None:
        return 0
    in_transaction(sessions, record_max_model_len, run_id, runtime.model_lens())
    for chunk in chunks:
        enqueue(self.app, "evals.execute_batch", run_id, chunk)
    if not chunks:
        enqueue(self.app, "evals.finalize_run", run_id)
    log.info(
        "run %s: fanned out %d samples in %d batches", run_id, sum(map(len, chunks)), len(chunks)
    )
    return len(chunks)


@named_task("evals.execute_batch")
def execute_batch(self: Any, run_id: int, sample_ids: list[int]) -> dict[str, int]:
    """Execute a batch (claims skip finished samples); ask to finalise if it held the last."""
    runtime = runtime_of(self.app)
    counts = runtime.execute(sample_ids)
    if in_transaction(runtime.sessions(), ready_to_finalize, run_id):
        enqueue(self.app, "evals.finalize_run", run_id)
    return counts


@named_task("evals.finalize_run")
def finalize_run(self: Any, run_id: int) -> str | None:
    """Score the run and decide its alerts, if this worker wins the claim; then notify."""
    runtime = runtime_of(self.app)
    worker, evals = runtime.settings.worker, runtime.settings.eval
    done = finalize(
        runtime.sessions(),
        run_id,
        notify=worker.notify,
        lease_s=worker.finalize_lease_s,
        logprob_wait_s=evals.logprob_wait_s,
    )
    for notification_id in done.notification_ids:
        enqueue(self.app, "alerts.deliver", notification_id)
    if done.claimed:
        log.info("run %s: finalised (%s), alerts %s", run_id, done.status, done.alerts)
        # After the alerts are on their way: a slow collector delays nothing but this task.
        export_run_trace(runtime.sessions(), run_id, runtime.run_tracing)
    return done.status


@named_task("evals.sweep")
def sweep(self: Any) -> None:
    """Re-send work whose message was lost or whose worker died."""
    runtime = runtime_of(self.app)
    found = in_transaction(
        runtime.sessions(), find_stalled, datetime.now(UTC), runtime.settings.worker
    )
    for run_id in found.runs.start:
        enqueue(self.app, "evals.start_run", run_id)
    for run_id, chunk in found.runs.batches:
        enqueue(self.app, "evals.execute_batch", run_id, chunk)
    for run_id in found.runs.finalize:
        enqueue(self.app, "evals.finalize_run", run_id)
    for notification_id in found.notifications:
        enqueue(self.app, "alerts.deliver", notification_id)
    if not found.empty:
        log.info("sweep: %s", found)
