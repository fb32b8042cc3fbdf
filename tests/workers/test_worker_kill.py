"""SIGKILL a worker mid-run: another finishes it; nothing lost, nothing doubled, one result."""

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

pytestmark = pytest.mark.xdist_group("workers_kill")
SAMPLES = 120


@pytest.fixture(scope="module")
def stack() -> Iterator[WorkerStack]:
    """A slow simulator (about 0.3 s a call), so the run is still going when a worker dies."""
    config = {
        "scenarios": scenarios(STABLE_CAP),
        "timing": {"decode_ms_per_token": 25.0, "prefill_ms_per_token": 0.05},
    }
    with worker_stack(config) as running:
        yield running


def done_samples(stack: WorkerStack, run_id: int) -> int:
    with stack.sessions() as session:
        query = select(func.count()).where(EvalSample.run_id == run_id, EvalSample.status == "done")
        return int(session.scalar(query) or 0)


def test_killing_a_worker_mid_run_loses_and_doubles_nothing(stack: WorkerStack) -> None:
    stack.beat()  # its sweeper re-sends what the victim held, long before visibility_timeout
    victim = stack.worker(concurrency=2)
    survivor = stack.worker(concurrency=2)
    suite_id = import_yaml(stack.sessions, suite_yaml("kill", samples=20))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    stack.send("evals.start_run", run_id)
    wait_for(lambda: done_samples(stack, run_id) >= SAMPLES // 4, 60, "a quarter done", stack)
    with stack.sessions() as session:
        held = int(
            session.scalar(
                select(func.count()).where(
                    EvalSample.run_id == run_id, EvalSample.status == "running"
                )
            )
            or 0
        )
    victim.kill()

    def finalised() -> EvalRunFinalization | None:
        with stack.sessions() as session:
            row = session.get(EvalRunFinalization, run_id)
        return row if row is not None and row.completed_at is not None else None

    wait_for(finalised, 120, "the survivor to finish and finalise the run", stack)
    with stack.sessions() as session:
        run = session.get(EvalRun, run_id)
        samples = session.execute(
            select(EvalSample.status, EvalSample.call_id, EvalSample.attempts).where(
                EvalSample.run_id == run_id
            )
        ).all()
        results = session.scalar(select(func.count()).where(EvalQuestionResult.run_id == run_id))
        decisions = session.scalar(select(func.count()).where(AlertEvaluation.run_id == run_id))
    calls = len(recorded_calls(stack.sessions, Call.feature == "eval:kill", at_least=SAMPLES))
    assert run is not None and run.status == "completed"
    assert len(samples) == SAMPLES and {s.status for s in samples} == {"done"}
    assert len({s.call_id for s in samples}) == SAMPLES
    assert (results, decisions) == (2, 1)
    # Calls the victim had in flight were answered but never stored: they are sent again.
    reclaimed = sum(1 for s in samples if s.attempts > 1)
    assert calls - SAMPLES <= reclaimed <= held
    print(f"running at kill {held}, reclaimed {reclaimed}, orphan calls {calls - SAMPLES}")
    assert "evals.finalize_run" in survivor.log()
