"""Redis killed mid eval run and brought back empty: the run pauses, then completes, exactly once.

The harshest Redis failure: SIGKILL, no persistence, so every queued and unacknowledged task
message and every concurrency lease is gone when it returns. The database holds the run's state,
and the sweeper (beat) re-sends what was lost once the broker answers again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import ColumnElement, func, select

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
from tests.reliability.figures import report
from tests.reliability.redis_server import RedisServer, redis_server
from tests.support.recorded_calls import recorded_calls
from tests.workers.stack import WorkerStack, wait_for, worker_stack
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.slow, pytest.mark.timeout(400)]

SAMPLES = 120
# The outage lasts until every worker has failed this many reconnects (Celery backs off 2, 4,
# 6 s...): long enough that a run which did not pause would have gone on without Redis.
FAILED_RECONNECTS = 3
CANNOT_CONNECT = "Cannot connect to redis"


@pytest.fixture(scope="module")
def broker() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def stack(broker: RedisServer) -> Iterator[WorkerStack]:
    """Workers on the test's own Redis; a slow simulator (about 0.3 s a call)."""
    config = {
        "scenarios": scenarios(STABLE_CAP),
        "timing": {"decode_ms_per_token": 25.0, "prefill_ms_per_token": 0.05},
    }
    with worker_stack(config) as running:
        running.config["redis"] = {"url": broker.url}
        yield running


def _count(stack: WorkerStack, *where: ColumnElement[bool], model: type = EvalSample) -> int:
    query = select(func.count()).select_from(model).where(*where)
    with stack.sessions() as session:
        return int(session.scalar(query) or 0)


def _finalised(stack: WorkerStack, run_id: int) -> EvalRunFinalization | None:
    with stack.sessions() as session:
        row = session.get(EvalRunFinalization, run_id)
    return row if row is not None and row.completed_at is not None else None


def test_redis_killed_mid_run_the_run_completes_once(
    stack: WorkerStack, broker: RedisServer
) -> None:
    beat = stack.beat()
    workers = [stack.worker(concurrency=2), stack.worker(concurrency=2)]
    suite_id = import_yaml(stack.sessions, suite_yaml("redis-outage", samples=20))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    started = time.monotonic()
    stack.send("evals.start_run", run_id)

    def done() -> int:
        return _count(stack, EvalSample.run_id == run_id, EvalSample.status == "done")

    wait_for(lambda: done() >= SAMPLES // 4, 60, "a quarter of the samples", stack)
    refused_before = [w.log().count(CANNOT_CONNECT) for w in workers]
    broker.kill()
    killed = time.monotonic()
    done_at_kill = done()
    wait_for(
        lambda: all(
            w.log().count(CANNOT_CONNECT) - before >= FAILED_RECONNECTS
            for w, before in zip(workers, refused_before, strict=True)
        ),
        60,
        f"every worker failing {FAILED_RECONNECTS} reconnects to the dead broker",
        stack,
    )
    done_at_return = done()
    finalised_during_outage = _finalised(stack, run_id) is not None
    broker.start()
    returned = time.monotonic()
    outage_s = returned - killed
    wait_for(lambda: _finalised(stack, run_id), 150, "the run to be finalised", stack)
    recovery_s = time.monotonic() - returned

    with stack.sessions() as session:
        run = session.get(EvalRun, run_id)
        samples = session.execute(
            select(EvalSample.status, EvalSample.call_id, EvalSample.attempts).where(
                EvalSample.run_id == run_id
            )
        ).all()
    results = _count(stack, EvalQuestionResult.run_id == run_id, model=EvalQuestionResult)
    decisions = _count(stack, AlertEvaluation.run_id == run_id, model=AlertEvaluation)
    calls = len(
        recorded_calls(stack.sessions, Call.feature == "eval:redis-outage", at_least=SAMPLES)
    )
    report(
        "redis_outage",
        samples=SAMPLES,
        done_at_kill=done_at_kill,
        done_when_redis_returned=done_at_return,
        done_in_the_end=sum(1 for s in samples if s.status == "done"),
        distinct_answers=len({s.call_id for s in samples}),
        question_results=results,
        alert_decisions=decisions,
        gateway_calls=calls,
        samples_sent_twice=sum(1 for s in samples if s.attempts > 1),
        samples_sent_three_times=sum(1 for s in samples if s.attempts > 2),
        outage_s=outage_s,
        recovery_s=recovery_s,
        total_s=time.monotonic() - started,
    )
    assert not finalised_during_outage, "the run paused while Redis was away"
    assert run is not None and run.status == "completed"
    assert len(samples) == SAMPLES and {s.status for s in samples} == {"done"}
    assert len({s.call_id for s in samples}) == SAMPLES, "one answer per sample"
    assert (results, decisions) == (2, 1), "one result set, one alert decision"
    # A call in flight when Redis vanished may be asked again, once; a batch re-sent after
    # Redis returned must not fail on a connection Redis closed (redis_limits reconnects).
    assert max(s.attempts for s in samples) <= 2, "no sample asked three times"
    assert SAMPLES <= calls <= SAMPLES + sum(1 for s in samples if s.attempts > 1)
    dead = [p for p in [beat, *workers] if p.process is None or p.process.poll() is not None]
    assert not dead, "workers and beat survived the outage:\n" + "\n".join(
        f"{p.role} exited {p.process and p.process.returncode}:\n{p.log()[-4000:]}" for p in dead
    )
