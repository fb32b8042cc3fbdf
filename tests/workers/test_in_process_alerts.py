"""A run started from the CLI (no worker) scores and decides its alerts exactly like a worker's."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from plumbline.child_process import plumbline_command
from plumbline.models import Alert, AlertEvaluation, AlertNotification
from tests.workers.receiver import Receiver
from tests.workers.stack import WorkerStack, worker_stack
from tests.workers.suites import UNSTABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_in_process")
ALERT = """\
alert:
  critical: {consecutive: 1}
  notify: [hook]
"""


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


@pytest.fixture(scope="module")
def stack(receiver: Receiver) -> Iterator[WorkerStack]:
    notify = {"channels": {"hook": {"kind": "webhook", "url": f"{receiver.url}/hook"}}}
    with worker_stack({"scenarios": scenarios(UNSTABLE_CAP)}, worker={"notify": notify}) as s:
        yield s


def test_cli_run_fires_the_critical_alert_and_notifies(
    stack: WorkerStack, receiver: Receiver
) -> None:
    import_yaml(stack.sessions, suite_yaml("cli-alerts", samples=6, extra=ALERT))
    done = subprocess.run(
        plumbline_command("eval", "run", "cli-alerts"),
        env={**stack.env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with stack.sessions() as session:
        alerts = list(session.scalars(select(Alert)))
        evaluations = session.scalar(select(func.count()).select_from(AlertEvaluation))
        notifications = list(session.scalars(select(AlertNotification)))
    assert [(a.rule, a.status) for a in alerts] == [("question:cap", "firing")]
    assert evaluations == 1
    assert [n.status for n in notifications] == ["delivered"]
    (posted,) = receiver.on("/hook")
    assert posted.body["source"] == "plumbline"
    assert posted.body["event"] == "fire"
