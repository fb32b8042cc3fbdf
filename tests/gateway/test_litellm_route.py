"""A model served through litellm (its OpenAI-compatible provider) is metered like any other."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = pytest.mark.xdist_group("gateway-litellm")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[openai.OpenAI, CallReader]]:
    with (
        SimulatorProcess() as sim,
        sqlite_database(tmp_path_factory.mktemp("litellm")) as database,
    ):
        config = {
            "models": [
                {
                    "name": "hosted",
                    "provider": "litellm",
                    "litellm_model": "openai/tiny",
                    "api_base": f"{sim.base_url}/v1",
                    "price": {"input_per_million": 1.0, "output_per_million": 2.0},
                }
            ],
            "recording": {"flush_interval_ms": 20},
        }
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        with GatewayProcess(config, database, env=env) as gateway:
            key = issue_key(database, "team-hosted")
            reader = CallReader(database)
            with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as c:
                yield c, reader
            reader.close()


def test_non_streaming_call_through_litellm(setup: tuple[openai.OpenAI, CallReader]) -> None:
    client, calls = setup
    raw = client.chat.completions.with_raw_response.create(
        model="hosted", messages=[{"role": "user", "content": "hello"}], max_tokens=6
    )
    completion = raw.parse()
    assert completion.choices[0].message.content
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert row.backend == "litellm:openai/tiny" and row.status_code == 200
    assert completion.usage is not None
    assert row.completion_tokens == completion.usage.completion_tokens == 6
    assert row.output_cost == pytest.approx(6 * 2.0 / 1e6)


def test_streaming_call_through_litellm(setup: tuple[openai.OpenAI, CallReader]) -> None:
    client, calls = setup
    with client.chat.completions.with_streaming_response.create(
        model="hosted", messages=[{"role": "user", "content": "hello"}], max_tokens=6, stream=True
    ) as response:
        call_id = response.headers["x-plumbline-call-id"]
        text = "".join(c.choices[0].delta.content or "" for c in response.parse() if c.choices)
    assert text
    row = calls.wait(call_id)
    assert row.stream and row.status_code == 200 and row.ttft_ms is not None


def test_provider_errors_are_openai_shaped(setup: tuple[openai.OpenAI, CallReader]) -> None:
    client, calls = setup
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(
            model="hosted", messages=[{"role": "user", "content": "x"}], max_tokens=10**6
        )
    row = calls.wait(raised.value.response.headers["x-plumbline-call-id"])
    assert row.status_code == 400


def test_responses_are_refused_for_a_litellm_model(setup: tuple[openai.OpenAI, CallReader]) -> None:
    client, calls = setup
    with pytest.raises(openai.NotFoundError) as refused:
        client.responses.create(model="hosted", input="hello", max_output_tokens=6)
    assert "litellm" in refused.value.message
    row = calls.wait(refused.value.response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == ("/v1/responses", 404)


def test_messages_are_refused_for_a_litellm_model(setup: tuple[openai.OpenAI, CallReader]) -> None:
    client, calls = setup
    messages = anthropic.Anthropic(
        base_url=str(client.base_url).removesuffix("/v1/"), api_key=client.api_key, max_retries=0
    )
    with pytest.raises(anthropic.NotFoundError) as refused:
        messages.messages.create(
            model="hosted", max_tokens=6, messages=[{"role": "user", "content": "hello"}]
        )
    assert "`/v1/messages` needs a vLLM backend" in refused.value.message
    row = calls.wait(refused.value.response.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code) == ("/v1/messages", 404)
