"""Alert decisions on stored runs: hysteresis, one decision per run, lifecycle, notifications."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.decisions import AlertOutcome
from evals.alerts.listing import acknowledge_alert, alert_detail, list_alerts
from evals.errors import ConflictError, NotFoundError
from evals.transaction import in_transaction
from plumbline.models import Alert, AlertEvaluation, AlertNotification
from plumbline.settings import ChannelSettings, NotifySettings
from tests.alerts.scored_runs import BAD, GOOD, decide, import_alerting_suite, new_run

NOTIFY = NotifySettings(
    channels={"hook": ChannelSettings(kind="webhook", url="http://127.0.0.1:9/hook")},
    default_channels=["hook"],
)


def count(sessions: sessionmaker[Session], model: type, **where: object) -> int:
    with sessions() as session:
        query = select(func.count()).select_from(model).filter_by(**where)
        return int(session.scalar(query) or 0)


def cap_action(outcome: AlertOutcome) -> str:
    found = [d for d in outcome.decisions if d.key == "question:cap"]
    return found[0].action.value if found else "none"


def test_fire_after_two_breaches_stay_quiet_then_resolve_once(
    sessions: sessionmaker[Session],
) -> None:
    name = f"s-{uuid.uuid4().hex[:8]}"
    suite_id = import_alerting_suite(sessions, name)
    actions = []
    notified = []
    for answers in (GOOD, BAD, BAD, BAD, GOOD):
        run_id = new_run(sessions, suite_id)
        outcome = decide(sessions, name, run_id, answers, NOTIFY)
        actions.append(cap_action(outcome))
        notified.append(len(outcome.notification_ids))
    assert actions == ["nothing", "nothing", "fire", "stay_firing", "resolve"]
    assert notified == [0, 0, 2, 0, 2]  # the named webhook and the suite's inline Slack channel
    with sessions() as session:
        (alert,) = session.scalars(select(Alert).where(Alert.suite_id == suite_id)).all()
        rows = session.scalars(
            select(AlertNotification).where(AlertNotification.alert_id == alert.id)
        ).all()
    assert (alert.rule, alert.status) == ("question:cap", "resolved")
    assert sorted((n.channel, n.kind) for n in rows) == [
        ("hook", "webhook"),
        ("hook", "webhook"),
        ("inline", "slack"),
        ("inline", "slack"),
    ]
    events = [
        e["kind"] for e in in_transaction(sessions, alert_detail, alert.id, team_id=None).events
    ]
    assert events == ["fired", "resolved"]
    assert count(sessions, AlertEvaluation, suite_id=suite_id) == 5


def test_a_run_is_decided_once_and_an_older_run_is_never_applied_late(
    sessions: sessionmaker[Session],
) -> None:
    name = f"s-{uuid.uuid4().hex[:8]}"
    suite_id = import_alerting_suite(sessions, name)
    older, newer = new_run(sessions, suite_id), new_run(sessions, suite_id)
    assert decide(sessions, name, newer, BAD, NOTIFY).outcome == "evaluated"
    again = decide(sessions, name, newer, BAD, NOTIFY)
    assert (again.outcome, again.decisions, again.notification_ids) == ("already", (), ())
    assert decide(sessions, name, older, BAD, NOTIFY).outcome == "stale"
    assert count(sessions, AlertEvaluation, suite_id=suite_id) == 2
    with sessions() as session:
        stale = session.scalar(select(AlertEvaluation).where(AlertEvaluation.run_id == older))
    assert stale is not None and stale.outcome == "stale" and stale.decisions == []


def test_acknowledging_silences_renotification_and_is_scoped_to_the_team(
    sessions: sessionmaker[Session],
) -> None:
    name = f"s-{uuid.uuid4().hex[:8]}"
    suite_id = import_alerting_suite(sessions, name)
    for _ in range(2):
        decide(sessions, name, new_run(sessions, suite_id), BAD, NOTIFY)
    (view,) = [
        v for v in in_transaction(sessions, list_alerts, team_id=None) if v.suite_id == suite_id
    ]
    now = datetime.now(UTC)
    with pytest.raises(NotFoundError):
        in_transaction(sessions, acknowledge_alert, view.id, "eve", team_id=10_000, now=now)
    acked = in_transaction(sessions, acknowledge_alert, view.id, "alice", team_id=None, now=now)
    assert (acked.status, acked.acknowledged_by) == ("acknowledged", "alice")
    assert [e["kind"] for e in acked.events] == ["fired", "acknowledged"]
    with pytest.raises(ConflictError, match="only a firing alert"):
        in_transaction(sessions, acknowledge_alert, view.id, "bob", team_id=None, now=now)
    still = decide(sessions, name, new_run(sessions, suite_id), BAD, NOTIFY)
    decision = next(d for d in still.decisions if d.key == "question:cap")
    assert (decision.status.value, decision.notify) == ("acknowledged", False)
    assert "acknowledged by alice" in decision.reasons
    resolved = decide(sessions, name, new_run(sessions, suite_id), GOOD, NOTIFY)
    assert cap_action(resolved) == "resolve" and len(resolved.notification_ids) == 2
