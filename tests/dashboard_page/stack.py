"""The dashboard's data, made by real processes: Postgres, simulator, gateway, a Celery worker.

Two teams send product traffic through the openai SDK; legal's suite (the indemnity near tie)
runs on the worker, which scores it and fires its alerts; sales' suite is started through the
API, which queues it for the same worker.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import redis
from sqlalchemy.orm import Session, sessionmaker

from evals.runs.creation import create_run
from evals.transaction import in_transaction
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Alert, EvalRunFinalization
from plumbline.settings import Settings
from simulator.process import SimulatorProcess
from tests.dashboard_page.suites import LEGAL_SUITE, SALES_SUITE
from tests.dashboard_page.traffic import (
    CAP_QUESTION,
    LAW_QUESTION,
    send_bad_requests,
    send_hostile_call,
    send_responses,
    send_traffic,
)
from tests.support.databases import postgres_database
from tests.support.gateway_process import TEST_PEPPER, GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_for, wait_past_wall_clock
from tests.workers.processes import CeleryProcess
from workers.app import create_celery_app

REDIS_URL = "redis://127.0.0.1:6379/0"
TEN_SECONDS = 10


@dataclass(frozen=True)
class DashboardStack:
    """What the browser tests read: the gateway, keys per team and the ids of what was made."""

    gateway_url: str
    sessions: sessionmaker[Session]
    keys: dict[str, str]
    legal_calls: list[str]
    sales_calls: list[str]
    legal_run: int
    sales_run: int
    legal_alerts: list[int]

    def api(self, team: str) -> httpx.Client:
        """A client of the read API with the team's key (`admin` for the admin key)."""
        headers = {"Authorization": f"Bearer {self.keys[team]}"}
        return httpx.Client(base_url=self.gateway_url, headers=headers, timeout=30)


def _wait(check: Any, timeout: float, what: str) -> Any:
    return wait_for(check, timeout=timeout, what=what, poll=0.2)


def _next_bucket(step_s: int) -> None:
    now = time.time()
    wait_past_wall_clock((now // step_s + 1) * step_s, what=f"the next {step_s} s bucket")


def _import_suite(gateway_url: str, key: str, text: str) -> int:
    response = httpx.post(
        f"{gateway_url}/api/evals/suites",
        content=text,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/yaml"},
    )
    assert response.status_code == 201, response.text
    return int(response.json()["suite"]["id"])


def _run_on_worker(settings: Settings, sessions: sessionmaker[Session], suite_id: int) -> int:
    """Create a run as the scheduler does and let the worker fan it out, score it and alert."""
    created = in_transaction(sessions, create_run, suite_id, team_id=None, trigger="schedule")
    run_id = created.run_id
    create_celery_app(settings).send_task("evals.start_run", args=[run_id])

    def finalised() -> bool:
        with sessions() as session:
            done = session.get(EvalRunFinalization, run_id)
            return done is not None and done.completed_at is not None

    _wait(finalised, 120, f"run {run_id} to be finalised by the worker")
    return run_id


def _run_through_api(gateway_url: str, key: str, suite_id: int) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    started = httpx.post(f"{gateway_url}/api/evals/suites/{suite_id}/runs", headers=headers)
    assert started.status_code == 202, started.text
    run_id = int(started.json()["id"])

    def completed() -> bool:
        run = httpx.get(f"{gateway_url}/api/evals/runs/{run_id}", headers=headers).json()
        assert run["status"] not in ("failed", "partial"), run
        return bool(run["status"] == "completed")

    _wait(completed, 120, f"API run {run_id} to complete")
    return run_id


def _drop_redis_keys(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@contextmanager
def dashboard_stack() -> Iterator[DashboardStack]:
    """Start everything, make the data, yield; stop everything and drop the database after."""
    prefix = f"plumbline-dash-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config()))
        url = exits.enter_context(postgres_database("plumbline_dash"))
        keys = {
            "admin": issue_key(url, "ops", admin=True),
            "legal": issue_key(url, "legal"),
            "sales": issue_key(url, "sales"),
        }
        config = gateway_config(simulator.base_url, features=["contracts", "search"])
        # API-started runs are queued for the worker below (on its Redis prefix), which sends
        # them with the admin eval key (eval: labels are admin-only).
        queueing = {
            "PLUMBLINE_EMBEDDED": "false",
            "PLUMBLINE_REDIS__URL": REDIS_URL,
            "PLUMBLINE_WORKER__KEY_PREFIX": prefix,
            "PLUMBLINE_EVAL__API_KEY": keys["admin"],
        }
        gateway = GatewayProcess(config, url, env=queueing)
        exits.enter_context(gateway)
        engine = create_db_engine(url)
        exits.callback(engine.dispose)
        sessions = make_session_factory(engine)
        settings = Settings.model_validate(
            {
                "database": {"url": url},
                "redis": {"url": REDIS_URL},
                "key_salt": TEST_PEPPER,
                "eval": {"gateway_url": gateway.url, "api_key": keys["admin"], "logprob_wait_s": 5},
                "worker": {"key_prefix": prefix, "batch_size": 10},
            }
        )
        exits.callback(_drop_redis_keys, prefix)
        env = {
            "PLUMBLINE_DATABASE__URL": url,
            "PLUMBLINE_REDIS__URL": REDIS_URL,
            "PLUMBLINE_KEY_SALT": TEST_PEPPER,
            "PLUMBLINE_EVAL__GATEWAY_URL": gateway.url,
            "PLUMBLINE_EVAL__API_KEY": keys["admin"],
            "PLUMBLINE_EVAL__LOGPROB_WAIT_S": "5",
            "PLUMBLINE_WORKER__KEY_PREFIX": prefix,
            "PLUMBLINE_WORKER__BATCH_SIZE": "10",
        }
        worker = CeleryProcess("worker", ["--concurrency=2"], env).start()
        exits.callback(worker.stop)

        legal_calls = send_traffic(gateway.url, keys["legal"], "contracts", CAP_QUESTION, 8)
        send_bad_requests(gateway.url, keys["legal"], "contracts", 3)
        _next_bucket(TEN_SECONDS)  # so the 15-minute charts (10 s steps) have several points
        legal_calls += send_traffic(gateway.url, keys["legal"], "contracts", CAP_QUESTION, 8)
        legal_calls.append(send_hostile_call(gateway.url, keys["legal"]))
        sales_calls = send_traffic(gateway.url, keys["sales"], "search", LAW_QUESTION, 8)
        send_responses(gateway.url, keys["legal"], "contracts", 2)  # a second call kind
        legal_suite = _import_suite(gateway.url, keys["legal"], LEGAL_SUITE)
        sales_suite = _import_suite(gateway.url, keys["sales"], SALES_SUITE)
        sales_run = _run_through_api(gateway.url, keys["sales"], sales_suite)
        legal_run = _run_on_worker(settings, sessions, legal_suite)
        with sessions() as session:
            alerts = session.query(Alert).filter(Alert.suite_id == legal_suite).all()
        assert alerts and all(a.status == "firing" for a in alerts), alerts
        yield DashboardStack(
            gateway.url,
            sessions,
            keys,
            legal_calls,
            sales_calls,
            legal_run,
            sales_run,
            sorted(a.id for a in alerts),
        )
