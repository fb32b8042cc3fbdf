"""A suite's own notify channels: refused at import, guarded at connect time, no read-back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.clients import delivery_clients
from evals.alerts.decisions import decide_alerts
from evals.alerts.delivery import deliver
from evals.alerts.listing import alert_detail
from evals.runs.creation import create_run
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import AlertNotification
from plumbline.outbound import StaticResolver
from plumbline.settings import NotifySettings
from plumbline.settings_env import settings_environment
from simulator.process import SimulatorProcess
from tests.alerts.scored_runs import BAD, scored
from tests.security.evals import NEAR_TIE, YAML, suite_yaml
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Listener
from tests.support.scenarios import INDEMNITY, simulator_config
from tests.support.waiting import wait_for

SECRET = b'{"Code": "Success", "SecretAccessKey": "metadata-secret-do-not-echo"}'


def with_channel(name: str, url: str) -> str:
    """Team alpha's alerting suite with one inline webhook channel at `url`."""
    channel = f'  notify:\n    - {{name: hook, kind: webhook, url: "{url}"}}\n'
    return suite_yaml(name, "alpha", *NEAR_TIE).replace("alert:\n", "alert:\n" + channel, 1)


class ChannelStack:
    """A gateway whose operator allowlisted 127.0.0.1, and the attacker's listener."""

    def __init__(self, gateway: GatewayProcess, keys: dict[str, str], attacker: Listener) -> None:
        self.gateway, self.keys, self.attacker = gateway, keys, attacker

    def api(self, who: str) -> httpx.Client:
        """A client with a role's key."""
        headers = {"Authorization": f"Bearer {self.keys[who]}"}
        return httpx.Client(base_url=self.gateway.url, headers=headers, timeout=30)

    def fire(self, suite_id: int) -> dict[str, Any]:
        """Run the suite as its team; the alert it fires once a delivery was attempted."""
        with self.api("alpha") as client:
            started = client.post(f"/api/evals/suites/{suite_id}/runs")
            assert started.status_code == 202, started.text

            def attempted() -> dict[str, Any] | None:
                listed = client.get("/api/alerts", params={"suite_id": suite_id}).json()["data"]
                if not listed:
                    return None
                alert: dict[str, Any] = client.get(f"/api/alerts/{listed[0]['id']}").json()
                notifications = alert["notifications"]
                return alert if notifications and notifications[0]["attempts"] else None

            return wait_for(
                attempted,
                timeout=120,
                what=f"suite {suite_id} firing an alert with a delivery attempt",
                poll=0.2,
            )


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChannelStack]:
    """Simulator, SQLite, gateway (allowed_hosts: 127.0.0.1) and a listener answering a secret."""
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(sqlite_database(tmp_path_factory.mktemp("channels")))
        keys = {"admin": issue_key(url, "platform", admin=True), "alpha": issue_key(url, "alpha")}
        attacker = exits.enter_context(Listener(status=500, body=SECRET))
        env = settings_environment(
            {
                "eval": {"api_key": keys["admin"], "logprob_wait_s": 1},
                "worker": {"notify": {"suite_channels": {"allowed_hosts": ["127.0.0.1"]}}},
            }
        )
        gateway = exits.enter_context(
            GatewayProcess(gateway_config(simulator.base_url), url, env=env)
        )
        yield ChannelStack(gateway, keys, attacker)


@pytest.mark.parametrize(
    "target",
    [
        "http://localhost:{port}/hook",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fd00:ec2::254]/latest/",
        "https://hooks.example.com/services/x",
    ],
)
def test_a_team_key_cannot_import_an_inline_channel_off_the_allowlist(
    stack: ChannelStack, target: str
) -> None:
    text = with_channel(f"inline-{uuid.uuid4().hex[:8]}", target.format(port=stack.attacker.port))
    with stack.api("alpha") as client:
        refused = client.post("/api/evals/suites", content=text, headers=YAML)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert "worker.notify.suite_channels.allowed_hosts" in error["message"]
    assert error["param"] == "alert.notify[0].url"
    assert stack.attacker.requests() == []


def test_an_inline_channel_with_credentials_in_its_url_is_refused(stack: ChannelStack) -> None:
    text = with_channel("inline-userinfo", "http://user:pw@127.0.0.1:9/hook")
    with stack.api("admin") as client:
        refused = client.post("/api/evals/suites", content=text, headers=YAML)
    assert refused.status_code == 400, refused.text
    assert "user name or password" in refused.json()["error"]["message"]


def test_an_inline_channel_may_not_set_host_or_framing_headers(stack: ChannelStack) -> None:
    text = with_channel("inline-host", f"{stack.attacker.url}/hook").replace(
        "kind: webhook,", "kind: webhook, headers: {Host: metadata.internal},"
    )
    with stack.api("alpha") as client:
        refused = client.post("/api/evals/suites", content=text, headers=YAML)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["param"] == "alert.notify[0].headers"


def test_an_admin_imported_channel_to_loopback_is_refused_at_connect_time(
    stack: ChannelStack,
) -> None:
    # "localhost" resolves (through the system resolver) to loopback, not on the allowlist.
    text = with_channel("admin-inline", f"http://localhost:{stack.attacker.port}/hook")
    with stack.api("admin") as client:
        created = client.post("/api/evals/suites", content=text, headers=YAML)
    assert created.status_code == 201, created.text
    alert = stack.fire(int(created.json()["suite"]["id"]))
    [sent] = alert["notifications"]
    assert (sent["status"], sent["last_status_code"], sent["last_error"]) == (
        "failed",
        None,
        "blocked_address",
    )
    assert stack.attacker.requests() == []


def test_an_allowlisted_channel_is_delivered_but_its_answer_is_never_shown(
    stack: ChannelStack,
) -> None:
    text = with_channel("allowed-inline", f"{stack.attacker.url}/hook")
    with stack.api("alpha") as client:
        created = client.post("/api/evals/suites", content=text, headers=YAML)
        assert created.status_code == 201, created.text
        suite_id = int(created.json()["suite"]["id"])
        alert = stack.fire(suite_id)
        # Every view of the alerts (the suite and its critical question both fire).
        listed = client.get("/api/alerts", params={"suite_id": suite_id, "status": "all"})
        shown = [listed.text] + [
            client.get(f"/api/alerts/{a['id']}").text for a in listed.json()["data"]
        ]
    heard = stack.attacker.requests()
    assert heard and all(h.path == "/hook" for h in heard)
    [sent] = alert["notifications"]
    assert (sent["last_status_code"], sent["last_error"]) == (500, "http_status")
    assert sent["attempt_log"][0]["error"] == "http_status"
    assert not any("metadata-secret" in text or "SecretAccessKey" in text for text in shown)


@pytest.fixture
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    """Sessions on a freshly migrated SQLite database."""
    with sqlite_database(tmp_path_factory.mktemp("channels-db")) as url:
        engine = create_db_engine(url)
        try:
            yield make_session_factory(engine)
        finally:
            engine.dispose()


SERVICE_SUITE = """\
name: {name}
team: legal
model: tiny
threshold: 0.9
alert:
  critical: {{consecutive: 1}}
  regression: {{enabled: false}}
  notify:
    - {{name: hook, kind: webhook, url: "{url}"}}
questions:
  - id: cap
    text: What is the indemnity cap?
    answer: {{type: number}}
    critical: true
  - id: law
    text: Which law governs?
    answer: {{type: text}}
"""


@pytest.mark.parametrize(
    ("answer", "error"),
    [("169.254.169.254", "blocked_address"), ("127.0.0.1", "blocked_address")],
)
def test_a_name_that_resolves_to_an_internal_address_gets_nothing(
    sessions: sessionmaker[Session], answer: str, error: str
) -> None:
    with Listener() as listener:
        name = f"s-{uuid.uuid4().hex[:8]}"
        url = f"http://hooks.example.com:{listener.port}/hook"
        suite = parse_suite(SERVICE_SUITE.format(name=name, url=url))
        suite_id = in_transaction(sessions, import_suite, suite).suite_id
        run_id = in_transaction(sessions, create_run, suite_id, team_id=None).run_id
        notify = NotifySettings()
        outcome = in_transaction(
            sessions, decide_alerts, run_id, scored(name, run_id, BAD), notify, datetime.now(UTC)
        )
        [notification_id] = outcome.notification_ids
        resolver = StaticResolver({"hooks.example.com": [answer]})
        clients = delivery_clients(notify, resolver)
        try:
            delivered = deliver(sessions, notification_id, notify, clients)
        finally:
            clients.close()
        assert delivered.status == "failed"
        assert listener.requests() == []
    with sessions() as session:
        row = session.get(AlertNotification, notification_id)
        assert row is not None and row.last_error == error


def test_errors_stored_before_error_classes_are_withheld_from_views(
    sessions: sessionmaker[Session],
) -> None:
    name = f"s-{uuid.uuid4().hex[:8]}"
    suite = parse_suite(SERVICE_SUITE.format(name=name, url="https://hooks.example.com/x"))
    suite_id = in_transaction(sessions, import_suite, suite).suite_id
    run_id = in_transaction(sessions, create_run, suite_id, team_id=None).run_id
    notify = NotifySettings()
    outcome = in_transaction(
        sessions, decide_alerts, run_id, scored(name, run_id, BAD), notify, datetime.now(UTC)
    )
    [notification_id] = outcome.notification_ids
    legacy = SECRET.decode()
    with sessions() as session, session.begin():
        row = session.get(AlertNotification, notification_id)
        assert row is not None
        row.last_error, row.attempt_log = legacy, [{"status_code": 500, "error": legacy}]
        alert_id = row.alert_id
    with sessions() as session:
        view = alert_detail(session, alert_id, team_id=None)
    [shown] = view.notifications
    assert shown["last_error"] == shown["attempt_log"][0]["error"] == "error (detail withheld)"
