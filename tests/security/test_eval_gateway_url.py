"""The admin eval key goes only to eval.gateway_url, never to the address in a Host header."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from evals.gateway_client import GatewayCallError, GatewayClient
from plumbline.settings import EvalSettings, Settings
from simulator.process import SimulatorProcess
from tests.security.evals import NEAR_TIE, YAML, suite_yaml
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Listener
from tests.support.scenarios import INDEMNITY, simulator_config
from tests.support.waiting import wait_for
from workers.runtime import WorkerRuntime


class EvalGateway:
    """A gateway with an admin eval key, a team key, and the attacker's listener."""

    def __init__(self, gateway: GatewayProcess, keys: dict[str, str], attacker: Listener) -> None:
        self.gateway, self.keys, self.attacker = gateway, keys, attacker

    def team(self, host: str | None = None) -> httpx.Client:
        """Team alpha's client; `host` replaces the Host header the way an attacker would."""
        headers = {"Authorization": f"Bearer {self.keys['alpha']}"}
        if host:
            headers["Host"] = host
        return httpx.Client(base_url=self.gateway.url, headers=headers, timeout=30)

    def import_suite(self, name: str) -> int:
        """Team alpha's one-question suite; its id."""
        with self.team() as client:
            created = client.post(
                "/api/evals/suites", content=suite_yaml(name, "alpha", *NEAR_TIE), headers=YAML
            )
        assert created.status_code == 201, created.text
        return int(created.json()["suite"]["id"])


def eval_gateway(
    workdir: Path, gateway_url: str | None, *, eval_key: bool = True
) -> Iterator[EvalGateway]:
    """Simulator, SQLite database and gateway; None / False leave a setting unset."""
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(sqlite_database(workdir))
        keys = {"admin": issue_key(url, "platform", admin=True), "alpha": issue_key(url, "alpha")}
        attacker = exits.enter_context(Listener())
        env = {"PLUMBLINE_EVAL__API_KEY": keys["admin"], "PLUMBLINE_EVAL__LOGPROB_WAIT_S": "1"}
        if gateway_url is None:
            env["PLUMBLINE_EVAL__GATEWAY_URL"] = ""
        if not eval_key:
            del env["PLUMBLINE_EVAL__API_KEY"]
        gateway = exits.enter_context(
            GatewayProcess(gateway_config(simulator.base_url), url, env=env)
        )
        yield EvalGateway(gateway, keys, attacker)


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalGateway]:
    """eval.gateway_url set to the gateway's own address (as GatewayProcess does)."""
    yield from eval_gateway(tmp_path_factory.mktemp("eval-url"), "self")


@pytest.fixture(scope="module")
def unconfigured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalGateway]:
    """No eval.gateway_url."""
    yield from eval_gateway(tmp_path_factory.mktemp("eval-no-url"), None)


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalGateway]:
    """eval.gateway_url set, no eval key."""
    yield from eval_gateway(tmp_path_factory.mktemp("eval-no-key"), "self", eval_key=False)


def test_without_an_eval_key_a_run_is_refused_not_sent_with_the_callers_key(
    keyless: EvalGateway,
) -> None:
    """Eval calls carry the admin-only `eval:` label: the team's own key would be refused."""
    suite_id = keyless.import_suite("no-eval-key")
    with keyless.team() as client:
        started = client.post(f"/api/evals/suites/{suite_id}/runs")
        runs = client.get("/api/evals/runs").json()["data"]
    assert started.status_code == 503, started.text
    error = started.json()["error"]
    assert error["param"] == "eval.api_key" and "PLUMBLINE_EVAL__API_KEY" in error["message"]
    assert runs == []


def finished(client: httpx.Client, run_id: int, timeout: float = 120) -> dict[str, object]:
    """The run once it stops running."""

    def done() -> dict[str, object] | None:
        run: dict[str, object] = client.get(f"/api/evals/runs/{run_id}").json()
        return run if run["status"] in ("completed", "partial", "failed") else None

    return wait_for(done, timeout=timeout, what=f"run {run_id} to finish", poll=0.2)


def test_a_run_started_with_a_forged_host_sends_nothing_there(configured: EvalGateway) -> None:
    suite_id = configured.import_suite("host-forged")
    forged = f"127.0.0.1:{configured.attacker.port}"
    with configured.team(host=forged) as client:
        started = client.post(f"/api/evals/suites/{suite_id}/runs")
    assert started.status_code == 202, started.text
    with configured.team() as client:
        run = finished(client, int(started.json()["id"]))
        assert run["status"] == "completed", run
    # The eval calls reached eval.gateway_url: every sample was answered through it.
    samples = run["samples"]
    assert isinstance(samples, dict) and samples.get("done") == run["n_samples"] > 0, run
    assert configured.attacker.requests() == []


def test_paraphrases_generated_with_a_forged_host_send_nothing_there(
    configured: EvalGateway,
) -> None:
    suite_id = configured.import_suite("host-forged-paraphrases")
    forged = f"127.0.0.1:{configured.attacker.port}"
    with configured.team(host=forged) as client:
        generated = client.post(
            f"/api/evals/suites/{suite_id}/paraphrases/generate", json={"n": 1, "model": "tiny"}
        )
    assert generated.status_code == 200, generated.text
    assert configured.attacker.requests() == []


def test_without_eval_gateway_url_a_run_is_refused_with_a_503_naming_the_setting(
    unconfigured: EvalGateway,
) -> None:
    suite_id = unconfigured.import_suite("no-gateway-url")
    forged = f"127.0.0.1:{unconfigured.attacker.port}"
    with unconfigured.team(host=forged) as client:
        started = client.post(f"/api/evals/suites/{suite_id}/runs")
        generated = client.post(
            f"/api/evals/suites/{suite_id}/paraphrases/generate", json={"n": 1, "model": "tiny"}
        )
    for refused in (started, generated):
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert "eval.gateway_url" in error["message"] and error["param"] == "eval.gateway_url"
    with unconfigured.team() as client:
        runs = client.get("/api/evals/runs", params={"suite_id": suite_id}).json()["data"]
    assert runs == []
    assert unconfigured.attacker.requests() == []


def test_a_worker_without_eval_gateway_url_refuses_eval_work_naming_the_setting() -> None:
    settings = Settings(eval=EvalSettings(api_key=SecretStr("pl-admin"), gateway_url=None))
    with pytest.raises(RuntimeError, match="PLUMBLINE_EVAL__GATEWAY_URL"):
        WorkerRuntime(settings, embedded=False).gateway_client()
    # The embedded worker runs beside the gateway on this machine, at its default address.
    assert WorkerRuntime(settings, embedded=True).gateway_url() == "http://127.0.0.1:8080"


def test_a_stored_endpoint_cannot_move_the_eval_key_to_another_host() -> None:
    async def resend(port: int) -> GatewayCallError:
        async with GatewayClient("http://127.0.0.1:9", "pl-admin-key") as client:
            with pytest.raises(GatewayCallError) as refused:
                await client.complete(
                    f"@127.0.0.1:{port}/v1/chat/completions", {}, feature="f", team="t"
                )
            return refused.value

    with Listener() as attacker:
        error = asyncio.run(resend(attacker.port))
        assert "must start with '/'" in str(error)
        assert attacker.requests() == []
