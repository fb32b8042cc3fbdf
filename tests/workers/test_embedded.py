"""Embedded mode (the demo): one `plumbline worker --embedded` process, no Redis, on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from plumbline.models import AlertEvaluation, EvalRun
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.workers.processes import CeleryProcess
from tests.workers.stack import FAST, flatten, wait_for
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_embedded")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """Simulator and gateway on a SQLite file."""
    directory = tmp_path_factory.mktemp("embedded")
    with eval_stack("sqlite", directory, {"scenarios": scenarios(STABLE_CAP)}) as running:
        yield running


def test_a_scheduled_run_completes_with_an_in_process_broker_and_beat(
    stack: EvalStack, tmp_path: Path
) -> None:
    settings = {
        "database": {"url": stack.database_url},
        "redis": {"url": "redis://127.0.0.1:1/0"},  # nothing listens: Redis must not be needed
        "eval": {"gateway_url": stack.gateway.url, "api_key": stack.admin_key},
        "worker": FAST,
    }
    suite_id = import_yaml(stack.sessions, suite_yaml("embedded", samples=2))
    with CeleryProcess(
        "worker", ["--embedded", "--concurrency=2"], flatten("", settings)
    ) as worker:
        import_yaml(
            stack.sessions, suite_yaml("embedded", samples=2, extra="schedule: '* * * * * */2'")
        )

        def evaluated() -> AlertEvaluation | None:
            with stack.sessions() as session:
                query = (
                    select(AlertEvaluation)
                    .join(EvalRun, EvalRun.id == AlertEvaluation.run_id)
                    .where(EvalRun.suite_id == suite_id)
                )
                return session.scalars(query).first()

        found = wait_for(evaluated, 60, "a scheduled run scored and alert-evaluated", worker)
        assert found.outcome == "evaluated"
        with stack.sessions() as session:
            run = session.get(EvalRun, found.run_id)
        assert run is not None and (run.status, run.trigger) == ("completed", "schedule")
        assert "memory://" in worker.log()
