"""The real vLLM pooling runner directly and through the gateway: same answers, rows = its usage.

The tiny Llama served with `--runner pooling --convert embed`. `/classify` needs a server with
`--convert classify` (a third server start on 2 cores), so it is checked against the simulator
only (`tests/gateway/test_pooling_api.py`, `test_pooling_hostile_input.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.gateway.pooling_stack import masked, pooling_gateway_config, post
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]
Q = "What is the capital of France?"
CASES: list[tuple[str, dict[str, Any]]] = [
    ("/v1/embeddings", {"model": "tiny", "input": Q}),
    ("/v1/embeddings", {"model": "tiny", "input": [Q, "Paris"], "encoding_format": "base64"}),
    ("/v1/embeddings", {"model": "tiny", "input": [1, 2, 3]}),
    ("/v1/embeddings", {"model": "tiny", "messages": [{"role": "user", "content": Q}]}),
    ("/v1/embeddings", {"model": "tiny", "input": []}),
    ("/v1/embeddings", {"model": "tiny", "input": "word " * 600}),
    ("/pooling", {"model": "tiny", "input": Q}),
    ("/score", {"model": "tiny", "text_1": Q, "text_2": ["Paris", "Berlin"]}),
    ("/v1/score", {"model": "tiny", "queries": Q, "documents": ["Paris", "Rome"]}),
    ("/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Berlin"]}),
    ("/v1/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Rome"], "top_n": 1}),
    ("/v2/rerank", {"model": "tiny", "query": Q, "documents": ["Paris", "Rome", "Oslo"]}),
    ("/rerank", {"model": "tiny", "query": Q, "documents": []}),
    ("/tokenize", {"model": "tiny", "prompt": Q}),
    ("/detokenize", {"model": "tiny", "tokens": [1, 402, 302]}),
]


@pytest.fixture(scope="module")
def pooling_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A real vLLM running the pooling runner."""
    for client in launched_server(request, tmp_path_factory, "--runner", "pooling"):
        yield str(client.base_url).rstrip("/")


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database("plumbline_vllm_pool") as url:
        yield url


@pytest.fixture(scope="module")
def gateway(pooling_url: str, database: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(pooling_gateway_config(pooling_url, database), database)
    with process:
        yield process


@pytest.fixture(scope="module")
def key(database: str) -> str:
    return issue_key(database, "pool-team")


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


@pytest.mark.parametrize(("path", "body"), CASES)
def test_vllm_answers_alike_directly_and_through_the_gateway(
    path: str,
    body: dict[str, Any],
    pooling_url: str,
    gateway: GatewayProcess,
    key: str,
    calls: CallReader,
) -> None:
    direct = post(pooling_url, path, body)
    via = post(gateway.url, path, body, key)
    assert via.status_code == direct.status_code, via.text
    assert via.headers["content-type"] == direct.headers["content-type"]
    assert masked(via.json()) == masked(direct.json())
    row = calls.wait(via.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == (path, via.status_code)
    usage = via.json().get("usage") if via.status_code == 200 else None
    if usage is not None and not path.endswith("tokenize"):
        assert row.prompt_tokens == usage["prompt_tokens"] and row.usage_source == "backend"
        assert row.input_cost == pytest.approx(usage["prompt_tokens"] * 0.5 / 1e6)


def test_the_openai_sdk_sync_and_async_gets_vllms_vectors(
    pooling_url: str, gateway: GatewayProcess, key: str, calls: CallReader
) -> None:
    inputs = [Q, "Paris", "Berlin"]
    with (
        openai.OpenAI(base_url=f"{pooling_url}/v1", api_key="x", max_retries=0) as direct,
        openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client,
    ):
        for fmt in ("float", "base64"):
            expected = direct.embeddings.create(model="tiny", input=inputs, encoding_format=fmt)
            raw = client.embeddings.with_raw_response.create(
                model="tiny", input=inputs, encoding_format=fmt
            )
            got = raw.parse()
            assert [d.embedding for d in got.data] == [d.embedding for d in expected.data]
            row = calls.wait(raw.headers["x-plumbline-call-id"])
            assert (row.items, row.prompt_tokens) == (3, expected.usage.prompt_tokens)
        # The SDK's default: base64 on the wire, floats decoded by the SDK.
        decoded = [d.embedding for d in client.embeddings.create(model="tiny", input=inputs).data]
        assert decoded == [
            d.embedding for d in direct.embeddings.create(model="tiny", input=inputs).data
        ]

    async def embed() -> list[list[float]]:
        async with openai.AsyncOpenAI(
            base_url=f"{gateway.url}/v1", api_key=key, max_retries=0
        ) as aclient:
            answer = await aclient.embeddings.create(model="tiny", input=inputs)
            return [d.embedding for d in answer.data]

    assert asyncio.run(embed()) == decoded


def test_the_gateway_refuses_vllms_404s_in_openai_shape_and_reads_the_runner(
    pooling_url: str, gateway: GatewayProcess, key: str
) -> None:
    chat = {"model": "tiny", "messages": [{"role": "user", "content": Q}], "max_tokens": 2}
    assert post(pooling_url, "/v1/chat/completions", chat).json() == {"detail": "Not Found"}
    refused = post(gateway.url, "/v1/chat/completions", chat, key)
    assert refused.status_code == 404 and refused.json()["error"]["param"] == "model"
    # `gen` is configured as generate on this pooling server: the monitor took it out.
    health = httpx.get(f"{gateway.url}/health").json()
    assert (health["backends_healthy"], health["backends_total"]) == (1, 2)
