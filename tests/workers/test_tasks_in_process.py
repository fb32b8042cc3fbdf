"""Task functions called directly (no worker): what each one enqueues, and its effect."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from celery import Celery
from sqlalchemy import func, select

from evals.runs.creation import create_run
from evals.transaction import in_transaction
from plumbline.models import AlertEvaluation, EvalRun, EvalSample
from plumbline.settings import Settings
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml
from workers.app import create_celery_app, runtime_of
from workers.tasks.evals import execute_batch, finalize_run, start_run, sweep

pytestmark = pytest.mark.xdist_group("workers_in_process")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    with eval_stack(
        "sqlite", tmp_path_factory.mktemp("tasks"), {"scenarios": scenarios(STABLE_CAP)}
    ) as running:
        yield running


@pytest.fixture
def app(stack: EvalStack) -> Celery:
    """An embedded (in-memory broker) app: tasks called directly publish into it."""
    settings = Settings.model_validate(
        {
            "database": {"url": stack.database_url},
            "eval": {"gateway_url": stack.gateway.url, "api_key": stack.admin_key},
            "worker": {"batch_size": 7, "stall_after_s": 0.01, "sample_lease_s": 0.01},
        }
    )
    return create_celery_app(settings, embedded=True)


def sent(app: Celery, queue: str) -> list[tuple[str, list[Any]]]:
    """Drain a queue of the in-memory broker: (task name, args) of each message."""
    found = []
    with app.connection_for_read() as connection:
        simple = connection.SimpleQueue(queue, no_ack=True)
        while True:
            try:
                message = simple.get(block=False)
            except simple.Empty:
                break
            found.append((message.headers["task"], message.payload[0]))
        simple.close()
    return found


def test_start_execute_finalise_called_directly(stack: EvalStack, app: Celery) -> None:
    suite_id = import_yaml(stack.sessions, suite_yaml("direct", samples=3))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    assert start_run(run_id) == 3  # 18 samples in batches of 7
    batches = sent(app, "evals")
    assert [(name, args[0], len(args[1])) for name, args in batches] == [
        ("evals.execute_batch", run_id, 7),
        ("evals.execute_batch", run_id, 7),
        ("evals.execute_batch", run_id, 4),
    ]
    assert start_run(run_id) == 3 and len(sent(app, "evals")) == 3  # a duplicate start is harmless
    for index, (_, (run, ids)) in enumerate(batches):
        counts = execute_batch(run, ids)
        assert counts["done"] == len(ids)
        finalising = sent(app, "plumbline")
        assert finalising == ([("evals.finalize_run", [run_id])] if index == 2 else [])
    assert execute_batch(run_id, batches[0][1][1])["skipped"] == 7  # redelivered: all skipped
    assert finalize_run(run_id) == "completed"
    assert finalize_run(run_id) is None  # a second finalisation finds the claim completed
    with stack.sessions() as session:
        run = session.get(EvalRun, run_id)
        decisions = session.scalar(select(func.count()).where(AlertEvaluation.run_id == run_id))
    assert run is not None and run.status == "completed" and decisions == 1


def test_the_sweeper_resends_what_a_dead_worker_held(stack: EvalStack, app: Celery) -> None:
    suite_id = import_yaml(stack.sessions, suite_yaml("swept", samples=2))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    start_run(run_id)
    sent(app, "evals")  # the batch messages are lost with their worker
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    with stack.sessions.begin() as session:
        first = session.scalars(select(EvalSample).where(EvalSample.run_id == run_id)).first()
        run = session.get(EvalRun, run_id)
        assert first is not None and run is not None
        first.status, first.claimed_at = "running", long_ago  # and one sample was claimed by it
        # The worker died an hour ago: the run is past any stall window, however fast this is.
        run.started_at = long_ago
    sweep()
    resent = sent(app, "evals")
    assert [(name, args[0]) for name, args in resent] == [("evals.execute_batch", run_id)] * 2
    assert sum(len(args[1]) for _, args in resent) == 12


def test_workers_renew_their_sample_claims_every_third_of_the_lease(app: Celery) -> None:
    policy = runtime_of(app).execution_policy()
    assert policy.lease_s == 0.01
    assert policy.renew_every_s == pytest.approx(0.01 / 3)
