"""Schedules from the database: a change is picked up by a running beat; two beats, one run."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from plumbline.models import Call, EvalRun
from tests.support.recorded_calls import recorded_calls
from tests.workers.stack import WorkerStack, wait_for, worker_stack
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_schedules")
FANNED_OUT = re.compile(r"run (\d+): fanned out")
TICK_RECEIVED = re.compile(r"Task schedules\.dispatch_due_runs\[([0-9a-f-]+)\] received")
TICK_ID = re.compile(r"schedules\.dispatch_due_runs\[([0-9a-f-]+)\]")
# Celery's words for a task that is over: run to the end, failed, or dropped unstarted.
TICK_OVER = ("succeeded", "raised", "revoked", "expired")
TICK_SUCCEEDED = re.compile(r"Task schedules\.dispatch_due_runs\[([0-9a-f-]+)\] succeeded")


@pytest.fixture(scope="module")
def stack() -> Iterator[WorkerStack]:
    """One worker and one beat to start with."""
    with worker_stack({"scenarios": scenarios(STABLE_CAP)}) as running:
        running.worker(concurrency=2)
        running.beat()
        yield running


def scheduled_runs(stack: WorkerStack, suite_id: int) -> list[EvalRun]:
    with stack.sessions() as session:
        query = select(EvalRun).where(EvalRun.suite_id == suite_id).order_by(EvalRun.id)
        return list(session.scalars(query))


def schedule(stack: WorkerStack, name: str, cron: str | None) -> int:
    extra = f"schedule: '{cron}'" if cron else ""
    return import_yaml(stack.sessions, suite_yaml(name, samples=1, extra=extra))


def _ended_ticks(logs: str) -> set[str]:
    return {
        found.group(1)
        for line in logs.splitlines()
        if any(word in line for word in TICK_OVER) and (found := TICK_ID.search(line))
    }


def ticks_after_now(stack: WorkerStack, count: int) -> None:
    """Return once `count` schedule ticks that began after this call have run to the end.

    A tick already received may have read the schedules before the caller's change; it is
    waited out too, so what the database holds afterwards is what the ticks made of the change.
    """
    logs = stack.logs()
    earlier = set(TICK_RECEIVED.findall(logs))

    def done() -> bool:
        now = stack.logs()
        later = set(TICK_SUCCEEDED.findall(now)) - earlier
        return earlier <= _ended_ticks(now) and len(later) >= count

    wait_for(done, 40, f"{count} schedule ticks after the change", stack)


def test_a_schedule_change_is_picked_up_by_the_running_beat(stack: WorkerStack) -> None:
    suite_id = schedule(stack, "nightly", None)
    ticks_after_now(stack, 2)  # ticks that read the suite without a schedule
    assert scheduled_runs(stack, suite_id) == []
    schedule(stack, "nightly", "* * * * * */2")
    wait_for(
        lambda: sum(r.status == "completed" for r in scheduled_runs(stack, suite_id)) >= 2,
        40,
        "two scheduled runs",
        stack,
    )
    schedule(stack, "nightly", None)
    ticks_after_now(stack, 1)  # a slot taken by a tick just before the change is created now
    settled = len(scheduled_runs(stack, suite_id))
    ticks_after_now(stack, 6)  # 2.5 s of ticks or more: a new slot, had the change been lost
    runs = scheduled_runs(stack, suite_id)
    assert len(runs) == settled
    assert all(r.trigger == "schedule" and r.scheduled_for is not None for r in runs)
    assert all(r.scheduled_for.second % 2 == 0 for r in runs if r.scheduled_for)


def test_two_beats_never_start_the_same_run_twice(stack: WorkerStack) -> None:
    second = stack.beat()
    suite_id = schedule(stack, "twice", "* * * * * *")
    wait_for(lambda: len(scheduled_runs(stack, suite_id)) >= 5, 40, "five scheduled runs", stack)
    schedule(stack, "twice", None)
    ticks_after_now(stack, 1)  # the runs of slots taken just before the change exist now
    wait_for(
        lambda: all(r.status == "completed" for r in scheduled_runs(stack, suite_id)),
        60,
        "every scheduled run to complete",
        stack,
    )
    runs = scheduled_runs(stack, suite_id)
    assert len({r.scheduled_for for r in runs}) == len(runs)
    starts = Counter(int(m) for m in FANNED_OUT.findall(stack.logs()))
    assert all(starts[r.id] == 1 for r in runs), starts
    expected = sum(r.n_samples for r in runs)
    assert len(recorded_calls(stack.sessions, Call.feature == "eval:twice", at_least=expected)) == (
        expected
    )
    # Both beats were ticking while the runs were being created.
    assert "schedules.dispatch_due_runs" in second.log()
    assert stack.processes[1].log().count("schedules.dispatch_due_runs") > 1
