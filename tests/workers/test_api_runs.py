"""API-started runs execute on a real `plumbline worker`, never in the gateway that took them.

Each process gets its own relay to the one gateway as its eval.gateway_url: the gateway's relay
counting no call while the worker's counts every sample is what proves who made the calls.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from plumbline.child_process import free_port
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call, EvalRun, EvalSample
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.recorded_calls import recorded_calls
from tests.support.tcp_relay import TcpRelay
from tests.workers.runs import finalised
from tests.workers.stack import FAST, REDIS_URL, WorkerStack, _drop_keys, flatten, wait_for
from tests.workers.suites import STABLE_CAP, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_api_runs")
YAML = {"Content-Type": "application/yaml"}
# Slow enough decoding (about a second a sample) that a run is still executing when a resume
# of it arrives; the test waits on the samples' state, never on this.
SLOW = {"decode_ms_per_token": 100.0}


@dataclass
class ApiStack:
    """A worker stack whose gateway queues API runs, and the relays each process calls through."""

    workers: WorkerStack
    via_gateway: TcpRelay
    via_worker: TcpRelay
    exits: ExitStack

    def client(self, gateway: GatewayProcess | None = None) -> httpx.Client:
        """An admin client of the (queueing) gateway, or of another one on the same database."""
        url = (gateway or self.workers.gateway).url
        auth = {"Authorization": f"Bearer {self.workers.admin_key}"}
        client = httpx.Client(base_url=url, headers=auth, timeout=30)
        self.exits.callback(client.close)
        return client

    def gateway(self, **env: str) -> tuple[GatewayProcess, TcpRelay]:
        """Another gateway on the same database and simulator, with its own relay."""
        relay = self.exits.enter_context(TcpRelay(0))
        config = gateway_config(self.workers.simulator.base_url)
        env = {
            "PLUMBLINE_EVAL__API_KEY": self.workers.admin_key,
            "PLUMBLINE_EVAL__GATEWAY_URL": relay.url,
            **env,
        }
        process = GatewayProcess(config, self.workers.database_url, env=env)
        relay.upstream_port = process.port
        return self.exits.enter_context(process), relay


@pytest.fixture(scope="module")
def stack() -> Iterator[ApiStack]:
    """Simulator, Postgres, Redis prefix, one queueing gateway and one worker (3 processes)."""
    prefix = f"plumbline-test-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(
            SimulatorProcess({"scenarios": scenarios(STABLE_CAP), "timing": SLOW})
        )
        url = exits.enter_context(postgres_database("plumbline_workers"))
        admin_key = issue_key(url, "ops", admin=True)
        exits.callback(_drop_keys, prefix)
        via_gateway = exits.enter_context(TcpRelay(0))
        via_worker = exits.enter_context(TcpRelay(0))
        broker = {"redis": {"url": REDIS_URL}, "worker": {"key_prefix": prefix}}
        gateway = GatewayProcess(
            gateway_config(simulator.base_url),
            url,
            env={
                **flatten("", broker),
                "PLUMBLINE_EMBEDDED": "false",
                "PLUMBLINE_EVAL__API_KEY": admin_key,
                "PLUMBLINE_EVAL__GATEWAY_URL": via_gateway.url,
            },
        )
        via_gateway.upstream_port = via_worker.upstream_port = gateway.port
        exits.enter_context(gateway)
        engine = create_db_engine(url)
        exits.callback(engine.dispose)
        settings: dict[str, Any] = {
            "database": {"url": url},
            "redis": {"url": REDIS_URL},
            "key_salt": "plumbline-test-pepper",
            "eval": {"gateway_url": via_worker.url, "api_key": admin_key, "logprob_wait_s": 5},
            # One batch per run: a resume's batch could only run beside it on another process.
            "worker": {**FAST, "batch_size": 200, "key_prefix": prefix},
        }
        workers = WorkerStack(
            simulator, gateway, url, make_session_factory(engine), admin_key, settings, exits
        )
        workers.worker(concurrency=3)
        yield ApiStack(workers, via_gateway, via_worker, exits)


def import_suite(client: httpx.Client, name: str, samples: int) -> int:
    """Import a suite through the API; its id."""
    created = client.post(
        "/api/evals/suites", content=suite_yaml(name, samples=samples), headers=YAML
    )
    assert created.status_code == 201, created.text
    return int(created.json()["suite"]["id"])


def run_row(stack: ApiStack, run_id: int) -> EvalRun:
    with stack.workers.sessions() as session:
        run = session.get(EvalRun, run_id)
    assert run is not None
    return run


def attempts(stack: ApiStack, run_id: int) -> list[tuple[str, int]]:
    """(status, attempts) of every sample of the run."""
    with stack.workers.sessions() as session:
        rows = session.execute(
            select(EvalSample.status, EvalSample.attempts).where(EvalSample.run_id == run_id)
        ).all()
    return [(str(status), int(n)) for status, n in rows]


def wait_finalised(stack: ApiStack, run_id: int) -> EvalRun:
    wait_for(lambda: finalised(stack.workers, run_id), 120, f"run {run_id}", stack.workers)
    return run_row(stack, run_id)


def test_an_api_started_run_is_executed_by_the_worker_not_the_gateway(stack: ApiStack) -> None:
    client = stack.client()
    suite_id = import_suite(client, "queued", samples=2)
    before = stack.via_worker.counts()[1]
    started = client.post(f"/api/evals/suites/{suite_id}/runs")
    assert started.status_code == 202, started.text
    assert started.json()["status"] == "pending"
    run = wait_finalised(stack, int(started.json()["id"]))
    assert run.status == "completed" and run.trigger == "api"
    calls = recorded_calls(stack.workers.sessions, Call.feature == "eval:queued", at_least=12)
    assert len(calls) == 12
    # Every sample's call came through the worker's relay; none through the gateway's own.
    assert stack.via_worker.counts()[1] - before == 12
    assert stack.via_gateway.counts() == (0, 0)
    assert "evals.start_run" in stack.workers.logs()


def test_a_resume_of_an_executing_run_executes_no_sample_twice(stack: ApiStack) -> None:
    client = stack.client()
    suite_id = import_suite(client, "resumed-live", samples=8)
    run_id = int(client.post(f"/api/evals/suites/{suite_id}/runs").json()["id"])
    wait_for(
        lambda: any(s == "running" for s, _ in attempts(stack, run_id)),
        60,
        "the worker to claim samples",
        stack.workers,
    )
    resumed = client.post(f"/api/evals/runs/{run_id}/resume")
    assert resumed.status_code == 202, resumed.text
    run = wait_finalised(stack, run_id)
    assert run.status == "completed"
    samples = attempts(stack, run_id)
    assert len(samples) == 48 and all(row == ("done", 1) for row in samples), samples
    calls = recorded_calls(stack.workers.sessions, Call.feature == "eval:resumed-live", at_least=48)
    assert len(calls) == 48
    assert stack.via_gateway.counts() == (0, 0)


def test_with_the_broker_down_a_run_is_refused_failed_and_resumable(stack: ApiStack) -> None:
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"
    down, down_relay = stack.gateway(PLUMBLINE_EMBEDDED="false", PLUMBLINE_REDIS__URL=dead_broker)
    client, down_client = stack.client(), stack.client(down)
    suite_id = import_suite(client, "broker-down", samples=1)
    refused = down_client.post(f"/api/evals/suites/{suite_id}/runs")
    assert refused.status_code == 503, refused.text
    error = refused.json()["error"]
    assert error["param"] == "worker.broker_url"
    listed = client.get("/api/evals/runs", params={"suite_id": suite_id}).json()["data"]
    assert len(listed) == 1
    run_id = int(listed[0]["id"])
    assert f"POST /api/evals/runs/{run_id}/resume" in error["message"]
    assert "127.0.0.1" not in error["message"]  # the broker's address is the operator's
    run = run_row(stack, run_id)
    assert run.status == "failed" and "resume" in (run.error or "")
    assert {status for status, _ in attempts(stack, run_id)} == {"pending"}
    again = down_client.post(f"/api/evals/runs/{run_id}/resume")
    assert again.status_code == 503 and run_row(stack, run_id).status == "failed"
    # Neither refusal made the refusing gateway execute anything.
    assert down_relay.counts() == (0, 0)
    before = stack.via_worker.counts()[1]
    resumed = client.post(f"/api/evals/runs/{run_id}/resume")
    assert resumed.status_code == 202, resumed.text
    assert wait_finalised(stack, run_id).status == "completed"
    assert stack.via_worker.counts()[1] - before == 6
    assert down_relay.counts() == (0, 0) and stack.via_gateway.counts() == (0, 0)


def test_an_embedded_gateway_executes_api_runs_itself(stack: ApiStack) -> None:
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"
    embedded, relay = stack.gateway(PLUMBLINE_EMBEDDED="true", PLUMBLINE_REDIS__URL=dead_broker)
    client = stack.client(embedded)
    suite_id = import_suite(client, "embedded", samples=1)
    before = stack.via_worker.counts()[1]
    started = client.post(f"/api/evals/suites/{suite_id}/runs")
    assert started.status_code == 202, started.text
    run_id = int(started.json()["id"])
    wait_for(
        lambda: run_row(stack, run_id).status in ("completed", "partial", "failed") or None,
        120,
        f"embedded run {run_id}",
        stack.workers,
    )
    assert run_row(stack, run_id).status == "completed"
    assert relay.counts()[1] == 6 and stack.via_worker.counts()[1] == before
