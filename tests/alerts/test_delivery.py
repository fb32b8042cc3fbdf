"""One delivery attempt at a time: retried with backoff, recorded, never sent twice at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.clients import DeliveryClients, delivery_clients
from evals.alerts.delivery import deliver
from plumbline.models import AlertNotification
from plumbline.settings import ChannelSettings, NotifySettings
from tests.alerts.scored_runs import BAD, decide, import_alerting_suite, new_run
from tests.workers.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """The webhook is down for its first two requests; /gone always answers 404."""
    with Receiver(fail_first={"/hook": 2}, always={"/gone": 404}) as running:
        yield running


def fired(sessions: sessionmaker[Session], notify: NotifySettings) -> dict[str, AlertNotification]:
    """Fire the suite's critical alert; its notifications by channel."""
    name = f"s-{uuid.uuid4().hex[:8]}"
    suite_id = import_alerting_suite(sessions, name)
    ids: list[int] = []
    for _ in range(2):
        ids.extend(
            decide(sessions, name, new_run(sessions, suite_id), BAD, notify).notification_ids
        )
    with sessions() as session:
        rows = session.scalars(select(AlertNotification).where(AlertNotification.id.in_(ids)))
        return {row.channel: row for row in rows}


@contextmanager
def clients(notify: NotifySettings) -> Iterator[DeliveryClients]:
    """The delivery clients a worker builds from these settings."""
    built = delivery_clients(notify)
    try:
        yield built
    finally:
        built.close()


def row(sessions: sessionmaker[Session], notification_id: int) -> AlertNotification:
    with sessions() as session:
        found = session.get(AlertNotification, notification_id)
    assert found is not None
    return found


def test_a_failing_channel_is_retried_with_backoff_and_every_attempt_recorded(
    sessions: sessionmaker[Session], receiver: Receiver
) -> None:
    notify = NotifySettings(
        channels={"hook": ChannelSettings(kind="webhook", url=f"{receiver.url}/hook")},
        backoff_s=2.0,
        max_backoff_s=3.0,
    )
    hook = fired(sessions, notify)["hook"]
    with clients(notify) as http:
        outcomes = [deliver(sessions, hook.id, notify, http) for _ in range(4)]
    assert [(o.status, o.retry_in_s) for o in outcomes] == [
        ("retrying", 2.0),
        ("retrying", 3.0),
        ("delivered", None),
        ("skipped", None),
    ]
    stored = row(sessions, hook.id)
    assert (stored.status, stored.attempts, stored.last_status_code) == ("delivered", 3, 200)
    assert [a["status_code"] for a in stored.attempt_log] == [503, 503, 200]
    # The status code and a fixed class are kept, never what the channel answered.
    assert stored.attempt_log[0]["error"] == "http_status"
    assert stored.delivered_at is not None
    posted = receiver.on("/hook")
    assert [p.status for p in posted] == [503, 503, 200]
    assert posted[-1].body["event"] == "fire" and posted[-1].body["rule"] == "question:cap"


def test_a_refused_channel_fails_for_good_and_an_unreachable_one_is_retried(
    sessions: sessionmaker[Session], receiver: Receiver
) -> None:
    notify = NotifySettings(
        channels={"hook": ChannelSettings(kind="webhook", url=f"{receiver.url}/gone")},
        max_attempts=5,
    )
    rows = fired(sessions, notify)
    with clients(notify) as http:
        gone = deliver(sessions, rows["hook"].id, notify, http)
        # The suite's inline Slack channel points at loopback: refused by the outbound guard.
        refused = deliver(sessions, rows["inline"].id, notify, http)
    assert (gone.status, gone.retry_in_s) == ("failed", None)
    assert row(sessions, rows["hook"].id).last_status_code == 404
    assert refused.status == "failed"
    assert row(sessions, rows["inline"].id).last_error == "blocked_address"


def test_an_unreachable_allowlisted_suite_channel_is_retried(
    sessions: sessionmaker[Session],
) -> None:
    notify = NotifySettings(max_attempts=5)
    notify.suite_channels.allowed_hosts = ["127.0.0.1"]
    rows = fired(sessions, notify)
    with clients(notify) as http:
        # The inline channel's port 9 is closed: a transport error, tried again later.
        refused = deliver(sessions, rows["inline"].id, notify, http)
    assert refused.status == "retrying"
    assert row(sessions, rows["inline"].id).last_error == "connect_error"


def test_a_channel_defined_nowhere_is_recorded_as_failed(sessions: sessionmaker[Session]) -> None:
    rows = fired(sessions, NotifySettings())  # the suite names "hook"; no settings define it
    assert rows["hook"].kind == "unknown"
    with clients(NotifySettings()) as http:
        outcome = deliver(sessions, rows["hook"].id, NotifySettings(), http)
    stored = row(sessions, rows["hook"].id)
    assert (outcome.status, stored.attempts) == ("failed", 1)
    assert stored.last_error == "no channel with this name in the suite or in the settings"
