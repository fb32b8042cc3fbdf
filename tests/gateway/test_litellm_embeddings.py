"""A pooling model served through litellm: embeddings via its provider, the other routes a 404."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-litellm")
Stack = tuple[GatewayProcess, str, CallReader, SimulatorProcess]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        SimulatorProcess(simulator_config(runner="pooling")) as sim,
        sqlite_database(tmp_path_factory.mktemp("litellm-pool")) as database,
    ):
        model = {
            "name": "hosted-embed",
            "provider": "litellm",
            "litellm_model": "openai/tiny",
            "api_base": f"{sim.base_url}/v1",
            "runner": "pooling",
            "price": {"input_per_million": 0.1},
        }
        config = {"models": [model], "recording": {"flush_interval_ms": 20}}
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        gateway = GatewayProcess(config, database, env=env)
        with gateway:
            reader = CallReader(database)
            yield gateway, issue_key(database, "team-hosted"), reader, sim
            reader.close()


def test_embeddings_reach_the_provider_and_are_recorded(stack: Stack) -> None:
    gateway, key, calls, sim = stack
    with (
        openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client,
        openai.OpenAI(base_url=f"{sim.base_url}/v1", api_key="x", max_retries=0) as direct,
    ):
        inputs = ["What is the capital of France?", "Paris"]
        raw = client.embeddings.with_raw_response.create(
            model="hosted-embed", input=inputs, encoding_format="float"
        )
        expected = direct.embeddings.create(model="tiny", input=inputs, encoding_format="float")
    got = raw.parse()
    assert [d.embedding for d in got.data] == [d.embedding for d in expected.data]
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (row.backend, row.status_code, row.items) == ("litellm:openai/tiny", 200, 2)
    assert row.prompt_tokens == expected.usage.prompt_tokens
    assert row.input_cost == pytest.approx(expected.usage.prompt_tokens * 0.1 / 1e6)


@pytest.mark.parametrize(
    ("path", "status"),
    [("/rerank", 404), ("/score", 404), ("/pooling", 404), ("/tokenize", 404)],
)
def test_the_other_pooling_routes_are_a_clear_404(stack: Stack, path: str, status: int) -> None:
    gateway, key, calls, _ = stack
    body = {"model": "hosted-embed", "query": "q", "documents": ["d"], "input": "x", "prompt": "x"}
    response = httpx.post(
        f"{gateway.url}{path}", json=body, headers={"Authorization": f"Bearer {key}"}
    )
    assert response.status_code == status
    assert "needs a vLLM backend" in response.json()["error"]["message"]
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == status


def test_provider_options_never_reach_litellm(stack: Stack) -> None:
    gateway, key, calls, _ = stack
    body = {"model": "hosted-embed", "input": "x", "api_base": "http://169.254.169.254"}
    response = httpx.post(
        f"{gateway.url}/v1/embeddings", json=body, headers={"Authorization": f"Bearer {key}"}
    )
    assert response.status_code == 400 and response.json()["error"]["param"] == "api_base"
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert (row.status_code, row.backend) == (400, "litellm:openai/tiny")
