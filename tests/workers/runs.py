"""Start a run on the workers and wait until it has been scored and alert-evaluated."""

from __future__ import annotations

from evals.runs.creation import create_run
from evals.transaction import in_transaction
from plumbline.models import AlertEvaluation, EvalRunFinalization
from tests.workers.stack import WorkerStack, wait_for


def finalised(stack: WorkerStack, run_id: int) -> AlertEvaluation | None:
    """The run's alert evaluation once its finalisation completed."""
    with stack.sessions() as session:
        done = session.get(EvalRunFinalization, run_id)
        if done is None or done.completed_at is None:
            return None
        return session.query(AlertEvaluation).filter_by(run_id=run_id).one_or_none()


def run_on_workers(stack: WorkerStack, suite_id: int, timeout: float = 90) -> int:
    """A new run of the suite, executed by the workers to the end; its id."""
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    stack.send("evals.start_run", run_id)
    wait_for(lambda: finalised(stack, run_id), timeout, f"run {run_id} to be finalised", stack)
    return run_id
