"""The attacker on every pooling and tokenizer route: each bad body is a recorded OpenAI 4xx."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.gateway.pooling_stack import MAX_BODY, MAX_ITEMS, pooling_gateway_config, post
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-e2e")
ROUTES = (
    "/v1/embeddings",
    "/pooling",
    "/classify",
    "/score",
    "/v1/score",
    "/rerank",
    "/v1/rerank",
    "/v2/rerank",
    "/tokenize",
    "/detokenize",
)
INTERNAL = "http://169.254.169.254/latest/meta-data"
IMAGE = {"type": "image_url", "image_url": {"url": INTERNAL}}
MANY = ["x"] * (MAX_ITEMS + 1)
# Refused by the gateway before any backend is asked: (path, body, status, param).
REFUSED: list[tuple[str, Any, int, str | None]] = [
    ("/v1/embeddings", {"model": "tiny", "input": MANY}, 400, "input"),
    ("/v1/embeddings", {"model": "tiny", "input": [[1]] * (MAX_ITEMS + 1)}, 400, "input"),
    ("/pooling", {"model": "tiny", "input": MANY}, 400, "input"),
    ("/classify", {"model": "tiny", "input": MANY}, 400, "input"),
    ("/score", {"model": "tiny", "text_1": "q", "text_2": MANY}, 400, "text_2"),
    ("/v1/score", {"model": "tiny", "data_1": MANY, "data_2": MANY}, 400, "data_2"),
    ("/rerank", {"model": "tiny", "query": "q", "documents": MANY}, 400, "documents"),
    ("/v2/rerank", {"model": "tiny", "query": "q", "documents": MANY}, 400, "documents"),
    (
        "/v1/embeddings",
        {"model": "tiny", "messages": [[{"role": "user", "content": [IMAGE]}]]},
        400,
        "messages[0][0].content[0].image_url.url",
    ),
    (
        "/v1/embeddings",
        {"model": "tiny", "input": [{"role": "user", "content": [IMAGE]}]},
        400,
        "input[0].content[0].image_url.url",
    ),
    (
        "/rerank",
        {"model": "tiny", "query": "q", "documents": [{"content": [IMAGE]}]},
        400,
        "documents[0].content[0].image_url.url",
    ),
    ("/score", {"model": "tiny", "data_1": {"content": [IMAGE]}, "data_2": "d"}, 400, None),
    ("/tokenize", {"model": "tiny", "messages": [{"role": "user", "content": [IMAGE]}]}, 400, None),
    ("/v1/embeddings", {"model": "tiny", "input": "x", "encoding_format": "bytes"}, 400, None),
    ("/pooling", {"model": "tiny", "input": "x", "encoding_format": "bytes_only"}, 400, None),
    ("/pooling", {"model": "tiny", "data": {"url": INTERNAL}}, 400, "data"),
    ("/v1/embeddings", {"model": "tiny", "input": "x", "request_id": "a"}, 400, "request_id"),
    ("/rerank", {"model": "tiny", "query": "q", "documents": ["d"], "priority": -9}, 400, None),
    ("/score", {"model": "tiny", "text_1": "q", "text_2": "d", "priority": "soon"}, 400, None),
    ("/v1/embeddings", {"model": "tiny", "input": "x", "cache_salt": ""}, 400, "cache_salt"),
    ("/v1/embeddings", {"model": "tiny", "input": "x", "vllm_xargs": {}}, 400, "vllm_xargs"),
    ("/v1/embeddings", {"model": "nope", "input": "x"}, 404, "model"),
    ("/v1/embeddings", {"input": "x"}, 400, "model"),
]


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config(runner="pooling", max_model_len=512)) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(pooling_gateway_config(simulator.base_url, database), database)
    with process:
        yield process


def _refused(response: Any, status: int, calls: CallReader, path: str) -> Any:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and error["message"] and error["type"]
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == (path, status)
    return error, row


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b'{"model": "tiny", "input": ', 400),
        (b"[1, 2]", 400),
        (b"\xff\xfe", 400),
        (b"[" * 300 + b"]" * 300, 400),
        (b'{"model": "tiny", "input": "' + b"x" * MAX_BODY + b'"}', 413),
        (b'{"model": 7, "input": "x"}', 400),
    ],
    ids=["cut-json", "not-an-object", "not-utf8", "too-deep", "over-max-body", "model-type"],
)
def test_malformed_bodies_are_recorded_4xx(
    path: str,
    content: bytes,
    status: int,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    _, row = _refused(post(gateway.url, path, content, team_key), status, calls, path)
    assert row.backend is None


@pytest.mark.parametrize(("path", "body", "status", "param"), REFUSED)
def test_what_could_reach_past_the_bounds_or_the_team_is_refused_before_the_backend(
    path: str,
    body: Any,
    status: int,
    param: str | None,
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    before = simulator.stats()["requests_received"]
    error, row = _refused(post(gateway.url, path, body, team_key), status, calls, path)
    if param is not None:
        assert error["param"] == param
    assert row.backend is None
    assert simulator.stats()["requests_received"] == before


@pytest.mark.parametrize("path", ROUTES[:-2])
@pytest.mark.parametrize(
    "field",
    [{"input": 5}, {"input": {"a": 1}}, {"documents": 3}, {"text_1": None}, {"top_n": "x"}],
)
def test_wrong_types_get_the_backends_4xx_never_a_5xx(
    path: str, field: dict[str, Any], gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    body = {"model": "tiny", "query": "q", **field}
    response = post(gateway.url, path, orjson.dumps(body), team_key)
    assert 400 <= response.status_code < 500, response.text
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert row.status_code == response.status_code and row.error_message


def test_without_a_key_nothing_is_served(gateway: GatewayProcess, calls: CallReader) -> None:
    for path in ROUTES:
        response = post(gateway.url, path, {"model": "tiny", "input": "x"})
        _refused(response, 401, calls, path)


def test_a_team_key_cannot_act_for_another_team(
    gateway: GatewayProcess, team_key: str, other_team_key: str, calls: CallReader
) -> None:
    for path in ROUTES:
        response = httpx.post(
            f"{gateway.url}{path}",
            json={"model": "tiny", "input": "x"},
            headers={"Authorization": f"Bearer {team_key}", "X-Plumbline-Team": "team-b"},
        )
        _, row = _refused(response, 403, calls, path)
        assert row.backend is None
