"""Embeddings, pooling, score, rerank and tokenize through the gateway: vLLM's answer, recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.gateway.pooling_stack import masked, pooling_gateway_config, post
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-e2e")
Q = "What is the capital of France?"
# (path, body, items): every route of the pooling runner, and the shapes vLLM refuses itself.
CASES: list[tuple[str, dict[str, Any], int | None]] = [
    ("/v1/embeddings", {"model": "tiny", "input": Q}, 1),
    ("/v1/embeddings", {"model": "tiny", "input": [Q, "Paris"]}, 2),
    ("/v1/embeddings", {"model": "tiny", "input": [1, 2, 3]}, 1),
    ("/v1/embeddings", {"model": "tiny", "input": [[1, 2], [3]]}, 2),
    ("/v1/embeddings", {"model": "tiny", "input": Q, "encoding_format": "base64"}, 1),
    ("/v1/embeddings", {"model": "tiny", "messages": [{"role": "user", "content": Q}]}, 1),
    ("/v1/embeddings", {"model": "tiny", "input": []}, 0),
    ("/v1/embeddings", {"model": "tiny", "input": Q, "dimensions": 16}, 1),
    ("/v1/embeddings", {"model": "tiny", "input": "word " * 5000}, 1),
    ("/v1/embeddings", {"model": "tiny", "input": 5}, None),
    ("/v1/embeddings", {"model": "tiny"}, None),
    ("/pooling", {"model": "tiny", "input": Q}, 1),
    ("/score", {"model": "tiny", "text_1": Q, "text_2": ["Paris", "Berlin"]}, 2),
    ("/v1/score", {"model": "tiny", "text_1": Q, "text_2": "Paris"}, 1),
    ("/score", {"model": "tiny", "queries": Q, "documents": ["Paris", "Rome"]}, 2),
    ("/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Berlin"]}, 2),
    ("/v1/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Rome"]}, 2),
    ("/v2/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Rome", "Oslo"]}, 3),
    ("/rerank", {"model": "tiny", "query": Q, "documents": ["a", "b", "c"], "top_n": 1}, 3),
    ("/rerank", {"model": "tiny", "query": Q, "documents": []}, 0),
    ("/tokenize", {"model": "tiny", "prompt": Q}, None),
    ("/tokenize", {"model": "tiny", "messages": [{"role": "user", "content": Q}]}, None),
    ("/detokenize", {"model": "tiny", "tokens": [1, 402, 302]}, None),
    ("/detokenize", {"model": "tiny", "tokens": "x"}, None),
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


@pytest.fixture(scope="module")
def storing_key(database: str) -> str:
    return issue_key(database, "team-store", store_bodies=True)


@pytest.mark.parametrize(("path", "body", "items"), CASES)
def test_same_answer_directly_and_through_the_gateway(
    path: str,
    body: dict[str, Any],
    items: int | None,
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
) -> None:
    direct = post(simulator.base_url, path, body)
    via = post(gateway.url, path, body, team_key)
    assert via.status_code == direct.status_code, via.text
    assert via.headers["content-type"] == direct.headers["content-type"]
    assert masked(via.json()) == masked(direct.json())
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.model) == (path, via.status_code, "tiny")
    assert row.backend == simulator.base_url and not row.stream
    usage = via.json().get("usage") if via.status_code == 200 else None
    if path.endswith("tokenize"):
        # Counted, not priced: a tokenizer call is no inference.
        assert (row.prompt_tokens, row.input_cost, row.items) == (None, None, None)
    elif usage is not None:
        assert row.prompt_tokens == usage["prompt_tokens"] and row.usage_source == "backend"
        assert row.input_cost == pytest.approx(usage["prompt_tokens"] * 0.5 / 1e6)
        assert row.items == items
    else:
        assert row.error_message and row.items == items


def _embed_both(client: openai.OpenAI, direct: openai.OpenAI, fmt: str | None) -> tuple[Any, Any]:
    inputs = [Q, "Paris", "Berlin"]
    # Without a format the SDK asks for base64 and decodes the vectors itself.
    extra: dict[str, Any] = {"encoding_format": fmt} if fmt else {}
    raw = client.embeddings.with_raw_response.create(model="tiny", input=inputs, **extra)
    return raw, direct.embeddings.create(model="tiny", input=inputs, **extra)


@pytest.mark.parametrize("fmt", ["float", None], ids=["float", "sdk-decoded-base64"])
def test_the_openai_sdk_gets_the_same_vectors_and_the_call_is_recorded(
    fmt: str | None, client: openai.OpenAI, direct: openai.OpenAI, calls: CallReader
) -> None:
    raw, expected = _embed_both(client, direct, fmt)
    got = raw.parse()
    assert [d.embedding for d in got.data] == [d.embedding for d in expected.data]
    assert len(got.data[0].embedding) == 128
    assert got.usage == expected.usage
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.items, row.prompt_tokens) == (
        "/v1/embeddings",
        3,
        got.usage.prompt_tokens,
    )
    assert row.team_id is not None and row.e2e_ms is not None and row.e2e_ms > 0
    # Nothing generated: no output cost, no logprobs, no token timings.
    assert row.completion_tokens == 0 and row.ttft_ms is None and calls.logprobs(row) is None


def test_the_async_sdk_embeds_through_the_gateway(
    gateway: GatewayProcess, team_key: str, direct: openai.OpenAI
) -> None:
    async def embed() -> tuple[list[list[float]], str]:
        async with openai.AsyncOpenAI(
            base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0
        ) as client:
            # Without a format the SDK asks for base64 and decodes it to floats itself.
            floats = await client.embeddings.create(model="tiny", input=[Q, "Paris"])
            packed = await client.embeddings.create(model="tiny", input=Q, encoding_format="base64")
            return [d.embedding for d in floats.data], str(packed.data[0].embedding)

    floats, packed = asyncio.run(embed())
    assert floats == [
        d.embedding for d in direct.embeddings.create(model="tiny", input=[Q, "Paris"]).data
    ]
    # Asked for base64 explicitly, the SDK hands the string over undecoded.
    expected = direct.embeddings.create(model="tiny", input=Q, encoding_format="base64")
    assert packed == str(expected.data[0].embedding)


def test_bodies_and_vectors_are_stored_only_for_teams_that_store_bodies(
    gateway: GatewayProcess, team_key: str, storing_key: str, calls: CallReader
) -> None:
    body = {"model": "tiny", "input": [Q, "Paris"]}
    plain = post(gateway.url, "/v1/embeddings", body, team_key)
    stored = post(gateway.url, "/v1/embeddings", body, storing_key)
    assert plain.status_code == stored.status_code == 200
    assert calls.body(calls.wait(plain.headers["x-plumbline-call-id"])) is None
    kept = calls.body(calls.wait(stored.headers["x-plumbline-call-id"]))
    assert kept is not None and Q in kept.request_body
    assert kept.response_body is not None and '"embedding":[' in kept.response_body


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/v1/chat/completions", "tiny"),
        ("/v1/completions", "tiny"),
        ("/v1/responses", "tiny"),
        ("/v1/embeddings", "gen"),
        ("/rerank", "gen"),
        ("/score", "gen"),
        ("/pooling", "gen"),
        ("/classify", "gen"),
    ],
)
def test_a_call_of_the_other_runner_is_a_recorded_404(
    path: str, model: str, gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    body = {"model": model, "input": Q, "messages": [{"role": "user", "content": Q}]}
    response = post(gateway.url, path, {**body, "query": Q, "documents": ["x"]}, team_key)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["type"] == "NotFoundError" and error["param"] == "model"
    assert f"`{model}`" in error["message"] and path in error["message"]
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.backend) == (path, 404, None)


def test_a_backend_of_the_other_runner_is_out_of_rotation(
    gateway: GatewayProcess, team_key: str
) -> None:
    # `gen` says generate, but its backend is the pooling simulator: the monitor saw that.
    health = httpx.get(f"{gateway.url}/health").json()
    assert (health["backends_healthy"], health["backends_total"]) == (1, 2)
    chat = {"model": "gen", "messages": [{"role": "user", "content": Q}], "max_tokens": 2}
    response = post(gateway.url, "/v1/chat/completions", chat, team_key)
    assert response.status_code == 503 and "No healthy backend" in response.text
