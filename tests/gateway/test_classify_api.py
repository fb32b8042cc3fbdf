"""`/classify` through the gateway, against the simulator served as a classifier.

A real vLLM needs `--convert classify` for this route: a third server start on the 2-core test
machine, so the route is checked against the simulator (shapes from vLLM's protocol models).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from simulator.process import SimulatorProcess
from tests.gateway.pooling_stack import masked, pooling_gateway_config, post
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-e2e")
Q = "Is this clause an indemnity cap?"


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    config = simulator_config(runner="pooling", convert="classify", max_model_len=512)
    with SimulatorProcess(config) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(pooling_gateway_config(simulator.base_url, database), database)
    with process:
        yield process


@pytest.mark.parametrize(
    ("body", "items"),
    [
        ({"model": "tiny", "input": Q}, 1),
        ({"model": "tiny", "input": [Q, "No.", "Yes."]}, 3),
        ({"model": "tiny", "messages": [{"role": "user", "content": Q}]}, 1),
        ({"model": "tiny", "input": []}, 0),
        ({"model": "tiny"}, None),
    ],
)
def test_classify_answers_alike_and_is_recorded(
    body: dict[str, Any],
    items: int | None,
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    direct = post(simulator.base_url, "/classify", body)
    via = post(gateway.url, "/classify", body, team_key)
    assert via.status_code == direct.status_code, via.text
    assert masked(via.json()) == masked(direct.json())
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.items) == ("/classify", via.status_code, items)
    if via.status_code == 200:
        data = via.json()["data"]
        assert len(data) == items and all(d["num_classes"] == 2 for d in data)
        assert row.prompt_tokens == via.json()["usage"]["prompt_tokens"] > 0


def test_a_classifier_has_no_embeddings_and_says_so_as_vllm_does(
    simulator: SimulatorProcess, gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    body = {"model": "tiny", "input": Q}
    direct = post(simulator.base_url, "/v1/embeddings", body)
    via = post(gateway.url, "/v1/embeddings", body, team_key)
    # The route exists for the config (a pooling model); the backend's own 404 is relayed.
    assert via.status_code == direct.status_code == 404
    assert via.json() == direct.json() == {"detail": "Not Found"}
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.status_code, row.backend) == (404, simulator.base_url)
    assert row.error_message is not None and "Not Found" in row.error_message
