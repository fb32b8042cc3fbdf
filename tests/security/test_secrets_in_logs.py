"""No secret in any log: keys, the pepper, provider keys and channel secrets, even at DEBUG.

A gateway and a Celery worker run with known secrets; the test makes them fail in every way it
can (bad, near-miss and revoked keys, unreachable backends and providers, failing alert
deliveries), then searches every log line for every secret and every key's secret half.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest
import redis
from sqlalchemy import select

from evals.runs.creation import create_run
from evals.transaction import in_transaction
from gateway.auth.service import create_key, revoke_key
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import AlertNotification
from plumbline.settings import Settings
from simulator.process import SimulatorProcess
from tests.security.evals import NEAR_TIE, YAML, suite_yaml
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_until
from tests.workers.processes import CeleryProcess
from tests.workers.stack import FAST, flatten
from workers.app import create_celery_app

pytestmark = pytest.mark.xdist_group("security-logs")
REDIS_URL = "redis://127.0.0.1:6379/0"
PEPPER = "pepper-8d1f0c2b7a"
BACKEND_KEY = "sk-backend-6e3b9a1c4d7f2e8b"
PROVIDER_KEY = "sk-provider-1a2b3c4d5e6f7a8b9c"
HOOK_SECRET = "hook-secret-59c3e1"
SLACK_TOKEN = "SLACKTOKEN7f3e9d"
PROMPT_SECRET = "prompt-secret-c0ffee42"  # what a user typed is not the operator's to log


@dataclass
class LoggedStack:
    """Processes whose logs are searched, and the secrets they were given."""

    gateway: GatewayProcess
    worker: CeleryProcess
    simulator: SimulatorProcess
    keys: dict[str, str]
    database_url: str
    settings: dict[str, object]

    def logs(self) -> str:
        """Everything the gateway, the worker and the simulator wrote."""
        return "\n".join(
            (
                self.gateway.log_path.read_text(errors="replace"),
                self.worker.log(),
                self.simulator.log_path.read_text(errors="replace"),
            )
        )


def _issue(url: str, team: str, admin: bool = False) -> str:
    engine = create_db_engine(url)
    with make_session_factory(engine).begin() as session:
        key = create_key(session, team, PEPPER, admin=admin).plaintext
    engine.dispose()
    return key


@pytest.fixture(scope="module")
def stack() -> Iterator[LoggedStack]:
    prefix = f"plumbline-logs-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config()))
        url = exits.enter_context(postgres_database("plumbline_logs"))
        keys = {
            "admin": _issue(url, "ops", admin=True),
            "alpha": _issue(url, "alpha"),
            "revoked": _issue(url, "alpha"),
        }
        engine = create_db_engine(url)
        with make_session_factory(engine).begin() as session:
            revoke_key(session, keys["revoked"][3:13])
        engine.dispose()
        config = gateway_config(simulator.base_url)
        config["models"][0]["backends"][0]["api_key"] = BACKEND_KEY
        config["models"] += [
            {"name": "down", "backends": [{"url": "http://127.0.0.1:9", "api_key": BACKEND_KEY}]},
            {
                "name": "hosted",
                "provider": "litellm",
                "litellm_model": "openai/gpt-4o-mini",
                "api_base": "http://127.0.0.1:9/v1",
                "api_key": PROVIDER_KEY,
            },
        ]
        env = {"PLUMBLINE_KEY_SALT": PEPPER, "PLUMBLINE_LOG_LEVEL": "DEBUG"}
        gateway = exits.enter_context(GatewayProcess(config, url, env=env))
        settings = {
            "database": {"url": url},
            "redis": {"url": REDIS_URL},
            "key_salt": PEPPER,
            "eval": {"gateway_url": gateway.url, "api_key": keys["admin"], "logprob_wait_s": 2},
            "worker": {
                **FAST,
                "key_prefix": prefix,
                "notify": {
                    "max_attempts": 2,
                    "backoff_s": 0.2,
                    "channels": {
                        "hook": {
                            "kind": "webhook",
                            "url": "http://127.0.0.1:9/hook",
                            "headers": {"Authorization": f"Bearer {HOOK_SECRET}"},
                        },
                        "slack": {
                            "kind": "slack",
                            "url": f"http://127.0.0.1:9/services/T0/B0/{SLACK_TOKEN}",
                        },
                    },
                    "default_channels": ["hook", "slack"],
                },
            },
        }
        worker_env = {**flatten("", settings), "PLUMBLINE_LOG_LEVEL": "DEBUG"}
        worker = CeleryProcess("worker", ["--concurrency=2"], worker_env).start()
        exits.callback(worker.stop)
        exits.callback(_drop_redis_keys, prefix)
        yield LoggedStack(gateway, worker, simulator, keys, url, settings)


def _drop_redis_keys(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def _chat(stack: LoggedStack, key: str | None, model: str = "tiny") -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(
        f"{stack.gateway.url}/v1/chat/completions",
        json={
            "model": model,
            "messages": [{"role": "user", "content": f"my password is {PROMPT_SECRET}"}],
            "max_tokens": 4,
        },
        headers=headers,
        timeout=60,
    )


def _fail_everything(stack: LoggedStack) -> None:
    admin, alpha = stack.keys["admin"], stack.keys["alpha"]
    near_miss = admin[:-1] + ("x" if admin[-1] != "x" else "y")
    for key in (None, "nonsense", near_miss, stack.keys["revoked"], f"Bearer {alpha}"):
        assert _chat(stack, key).status_code == 401
    assert _chat(stack, alpha).status_code == 200
    assert _chat(stack, alpha, "down").status_code in (502, 503)
    assert _chat(stack, alpha, "hosted").status_code >= 400
    with httpx.Client(base_url=stack.gateway.url, timeout=60) as client:
        assert (
            client.get("/api/calls", headers={"Authorization": f"Bearer {near_miss}"}).status_code
            == 401
        )
        assert (
            client.get("/api/admin/keys", headers={"Authorization": f"Bearer {alpha}"}).status_code
            == 403
        )
        headers = {"Authorization": f"Bearer {admin}", **YAML}
        text = suite_yaml("logs", "alpha", *NEAR_TIE)
        suite = client.post("/api/evals/suites", content=text, headers=headers)
        assert suite.status_code == 201, suite.text
    engine = create_db_engine(stack.database_url)
    sessions = make_session_factory(engine)
    run = in_transaction(sessions, create_run, int(suite.json()["suite"]["id"]), team_id=None)
    producer = create_celery_app(Settings.model_validate(stack.settings))
    producer.send_task("evals.start_run", args=[run.run_id])

    def retried() -> bool:
        with sessions() as session:
            attempts = session.scalars(select(AlertNotification.attempts)).all()
        return bool(attempts) and all(a >= 2 for a in attempts)

    try:
        wait_until(retried, timeout=120, what="every notification attempted twice", poll=0.5)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{stack.worker.log()[-3000:]}") from None
    finally:
        engine.dispose()


def test_no_secret_reaches_any_log(stack: LoggedStack) -> None:
    _fail_everything(stack)
    logs = stack.logs()
    assert "401" in logs or "Invalid" in logs or "WARNING" in logs  # the logs are not empty
    assert "failed" in stack.worker.log().lower() or "error" in stack.worker.log().lower()
    secrets = [PEPPER, BACKEND_KEY, PROVIDER_KEY, HOOK_SECRET, SLACK_TOKEN, PROMPT_SECRET]
    for key in stack.keys.values():
        secrets += [key, key.split(".", 1)[1]]
    leaked = [s for s in secrets if s in logs]
    assert not leaked, [line for line in logs.splitlines() if any(s in line for s in leaked)][:10]
