"""A populated stack for the dashboard tests: simulators, a gateway, traffic and eval runs.

The database is prepared as docker-compose prepares it: the Grafana reader role is created by
dashboards/postgres/grafana-reader.sh on the empty database, then `plumbline migrate` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import psycopg
from openai.types.chat import ChatCompletionMessageParam
from sqlalchemy.engine import make_url

from plumbline.migrate import upgrade_to_head
from simulator.process import SimulatorProcess
from tests.dashboards.dashboard_files import DASHBOARDS
from tests.evals_integration.scripted import scenarios, suite_yaml
from tests.support.databases import PG_ADMIN_URL
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.sink_written import wait_until_sink_written

READER_SCRIPT = DASHBOARDS / "postgres" / "grafana-reader.sh"
QUESTION: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "What is the indemnity cap in this contract?"}
]


@dataclass(frozen=True)
class DashboardStack:
    """What the dashboard tests query: the database (as owner and as Grafana) and the gateway."""

    database_url: str
    reader_url: str
    gateway: GatewayProcess
    keys: dict[str, str]


@contextmanager
def reader_database() -> Iterator[tuple[str, str]]:
    """An empty database with the Grafana reader role, then migrated: (owner URL, reader URL)."""
    admin = make_url(PG_ADMIN_URL)
    name = f"plumbline_dash_{uuid.uuid4().hex[:10]}"
    reader = f"grafana_reader_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    owner_url = admin.set(database=name).render_as_string(hide_password=False)
    reader_url = admin.set(username=reader, password=None, database=name)
    try:
        env = {
            **os.environ,
            "PGHOST": admin.host or "127.0.0.1",
            "PGPORT": str(admin.port or 5432),
            "PGPASSWORD": admin.password or "",
            "POSTGRES_USER": admin.username or "postgres",
            "POSTGRES_DB": name,
            "GRAFANA_DB_USER": reader,
            "GRAFANA_DB_PASSWORD": "reader-password",
        }
        subprocess.run(["bash", str(READER_SCRIPT)], env=env, check=True, capture_output=True)
        upgrade_to_head(owner_url)
        yield owner_url, reader_url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'DROP ROLE IF EXISTS "{reader}"')


def _call(client: openai.OpenAI, feature: str | None, *, stream: bool, **extra: Any) -> None:
    headers = {"X-Plumbline-Feature": feature} if feature else {}
    try:
        if stream:
            for _ in client.chat.completions.create(
                model="tiny", messages=QUESTION, max_tokens=16, stream=True, extra_headers=headers
            ):
                pass
        else:
            client.chat.completions.create(
                model=extra.pop("model", "tiny"),
                messages=QUESTION,
                max_tokens=16,
                extra_headers=headers,
                **extra,
            )
    except openai.APIStatusError:
        pass  # the failures are part of the traffic


def _other_kinds(client: openai.OpenAI, *, stream: bool) -> None:
    """One completions call and one Responses call."""
    headers = {"X-Plumbline-Feature": "chat"}
    completion = client.completions.create(
        model="tiny", prompt="Hello", max_tokens=8, stream=stream, extra_headers=headers
    )
    response = client.responses.create(
        model="tiny", input="Hello", max_output_tokens=8, stream=stream, extra_headers=headers
    )
    if stream:
        for events in (completion, response):
            for _ in events:
                pass


def send_traffic(gateway: GatewayProcess, keys: dict[str, str]) -> None:
    """Streamed and plain calls per feature and kind, a burst, and 4xx and 5xx failures."""
    url = f"{gateway.url}/v1"
    with (
        openai.OpenAI(base_url=url, api_key=keys["team-a"], max_retries=0) as a,
        openai.OpenAI(base_url=url, api_key=keys["team-b"], max_retries=0) as b,
    ):
        for feature in ("chat", "search", None):
            for stream in (False, True):
                _call(a, feature, stream=stream)
        _call(b, "support", stream=True)
        for stream in (False, True):
            _other_kinds(a, stream=stream)  # the call-kind panels get more than one kind
        _call(a, "chat", stream=False, logprobs=True, top_logprobs=25)  # 400 from vLLM
        _call(a, "chat", stream=False, model="no-such-model")  # 404 from the gateway
        _call(b, "search", stream=False, model="broken")  # 503: its only backend is down
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda _: _call(a, "chat", stream=True), range(8)))
    wait_until_written(gateway)


def set_budget(gateway: GatewayProcess, admin_key: str, team: str) -> None:
    """A month budget on `team`, far above its traffic, so the budget panel has a line."""
    changed = httpx.patch(
        f"{gateway.url}/api/admin/teams/{team}",
        json={"budget_month": 100.0},
        headers={"Authorization": f"Bearer {admin_key}"},
    )
    assert changed.status_code == 200, changed.text


def wait_until_written(gateway: GatewayProcess, timeout: float = 30.0) -> None:
    """Block until the log sink has written every call it was given."""
    wait_until_sink_written(gateway.url, timeout)


def run_evals(database_url: str, gateway: GatewayProcess, admin_key: str, workdir: Path) -> None:
    """Import a suite and run it twice with the CLI, as an operator would."""
    env = {
        **os.environ,
        "PLUMBLINE_DATABASE__URL": database_url,
        "PLUMBLINE_EVAL__GATEWAY_URL": gateway.url,
        "PLUMBLINE_EVAL__API_KEY": admin_key,
    }
    suite = workdir / "contracts.yaml"
    suite.write_text(suite_yaml("contracts", "legal", samples=4))
    for args in (["import", str(suite)], ["run", "contracts"], ["run", "contracts"]):
        done = subprocess.run(
            [sys.executable, "-m", "apps.cli", "eval", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


@contextmanager
def dashboard_stack(workdir: Path) -> Iterator[DashboardStack]:
    """Simulators (one healthy, one dead), a gateway on a reader-ready database, data in it."""
    with ExitStack() as stack:
        healthy = stack.enter_context(SimulatorProcess({"scenarios": scenarios()}))
        dead = stack.enter_context(SimulatorProcess({"faults": {"engine_dead": True}}))
        owner_url, reader_url = stack.enter_context(reader_database())
        keys = {team: issue_key(owner_url, team) for team in ("team-a", "team-b")}
        keys["ops"] = issue_key(owner_url, "ops", admin=True)
        config = gateway_config(healthy.base_url)
        config["models"].append({"name": "broken", "backends": [{"url": dead.base_url}]})
        gateway = GatewayProcess(config, owner_url)
        stack.enter_context(gateway)
        set_budget(gateway, keys["ops"], "team-b")
        send_traffic(gateway, keys)
        run_evals(owner_url, gateway, keys["ops"], workdir)
        wait_until_written(gateway)
        yield DashboardStack(owner_url, reader_url, gateway, keys)
