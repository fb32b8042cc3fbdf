"""A run fanned out as batch tasks over two real `plumbline worker` processes on Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from evals.runs.creation import create_run
from evals.transaction import in_transaction
from plumbline.models import (
    AlertEvaluation,
    Call,
    EvalQuestionResult,
    EvalRun,
    EvalRunFinalization,
    EvalSample,
)
from tests.support.recorded_calls import recorded_calls
from tests.workers.stack import WorkerStack, wait_for, worker_stack
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_fanout")


@pytest.fixture(scope="module")
def stack() -> Iterator[WorkerStack]:
    """Two workers on one Redis prefix, sharing a gateway and a simulator."""
    with worker_stack({"scenarios": scenarios(STABLE_CAP)}) as running:
        running.worker(concurrency=2)
        running.worker(concurrency=2)
        yield running


def finished(stack: WorkerStack, run_id: int) -> EvalRun | None:
    with stack.sessions() as session:
        run = session.get(EvalRun, run_id)
        done = session.get(EvalRunFinalization, run_id)
    return run if run is not None and done is not None and done.completed_at else None


def test_a_run_spreads_over_two_workers_and_is_scored_once(stack: WorkerStack) -> None:
    suite_id = import_yaml(stack.sessions, suite_yaml("spread", samples=10))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    stack.send("evals.start_run", run_id)
    run = wait_for(lambda: finished(stack, run_id), 90, "the run to finish", stack)
    assert run.status == "completed"
    with stack.sessions() as session:
        statuses = session.execute(
            select(EvalSample.status, func.count())
            .where(EvalSample.run_id == run_id)
            .group_by(EvalSample.status)
        ).all()
        results = session.scalar(select(func.count()).where(EvalQuestionResult.run_id == run_id))
        decisions = session.scalar(select(func.count()).where(AlertEvaluation.run_id == run_id))
        call_ids = session.scalars(
            select(EvalSample.call_id).where(EvalSample.run_id == run_id)
        ).all()
    calls = len(recorded_calls(stack.sessions, Call.feature == "eval:spread", at_least=60))
    assert dict(statuses) == {"done": 60}
    assert (results, decisions) == (2, 1)
    assert len(set(call_ids)) == 60 and calls == 60
    batch_lines = [
        [
            line
            for line in worker.log().splitlines()
            if "evals.execute_batch" in line and "succeeded" in line
        ]
        for worker in stack.processes
    ]
    assert all(batch_lines), "each worker executed some of the 6 batches"
    assert sum(len(lines) for lines in batch_lines) == 6
