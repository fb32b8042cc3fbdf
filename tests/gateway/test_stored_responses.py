"""Stored responses through the gateway (`responses_store: true`): kept per team, pinned.

The simulator keeps responses as vLLM does with VLLM_ENABLE_RESPONSES_API_STORE=1; the openai
SDK creates, retrieves, chains and cancels them through a real gateway on a real database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
QUESTION = "What is the indemnity cap in this contract?"
RETRIEVE = "/v1/responses/{response_id}"
CANCEL = "/v1/responses/{response_id}/cancel"


def store_config(backend_url: str, **model: Any) -> dict[str, Any]:
    """The test gateway's config, its model's backends keeping responses."""
    config = gateway_config(backend_url)
    config["models"] = [{**config["models"][0], "responses_store": True, **model}]
    return config


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config(enable_responses_store=True)) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(store_config(simulator.base_url), database)
    with process:
        yield process


@pytest.fixture
def client(gateway: GatewayProcess, team_key: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0) as sdk:
        yield sdk


def _create(client: openai.OpenAI, **fields: Any) -> tuple[Response, str]:
    raw = client.responses.with_raw_response.create(
        model="tiny", input=QUESTION, max_output_tokens=8, temperature=0, **fields
    )
    return raw.parse(), raw.headers["x-plumbline-call-id"]


def test_a_stored_response_is_retrieved_right_after_creation(
    client: openai.OpenAI, calls: CallReader
) -> None:
    created, create_call = _create(client)
    # No wait: the owner is written before the id reaches the client.
    raw = client.responses.with_raw_response.retrieve(created.id)
    retrieved = raw.parse()
    assert retrieved.id == created.id and retrieved.output_text == created.output_text
    # The logprobs the gateway asked for are stripped on the way back, as at creation.
    assert retrieved.top_logprobs is None
    assert all(not part.logprobs for item in retrieved.output for part in item.content)  # type: ignore[union-attr]
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.status_code, row.model) == (RETRIEVE, 200, "tiny")
    assert row.backend is not None and row.prompt_tokens is None
    first = calls.wait(create_call)
    assert created.usage is not None and first.completion_tokens == created.usage.output_tokens


def test_a_chain_reaches_the_earlier_turn(client: openai.OpenAI, calls: CallReader) -> None:
    first, _ = _create(client)
    raw = client.responses.with_raw_response.create(
        model="tiny", input="And the term?", previous_response_id=first.id, max_output_tokens=8
    )
    second = raw.parse()
    assert second.status in ("completed", "incomplete")
    assert second.previous_response_id == first.id
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert row.status_code == 200 and row.prompt_tokens is not None
    assert second.usage is not None and first.usage is not None
    # The earlier turn and its answer are in the prompt.
    assert second.usage.input_tokens > first.usage.input_tokens


def test_a_streamed_response_is_stored_and_retrieved(client: openai.OpenAI) -> None:
    with client.responses.create(
        model="tiny", input=QUESTION, max_output_tokens=8, stream=True
    ) as stream:
        events = list(stream)
    final = next(e.response for e in events if e.type == "response.completed")
    assert client.responses.retrieve(final.id).output_text == final.output_text


def test_store_false_keeps_nothing_upstream(
    client: openai.OpenAI, simulator: SimulatorProcess
) -> None:
    created, _ = _create(client, store=False)
    assert httpx.get(f"{simulator.base_url}/v1/responses/{created.id}").status_code == 404
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)


def test_a_background_response_is_metered_once_when_seen_finished(
    client: openai.OpenAI, calls: CallReader
) -> None:
    queued, create_call = _create(client, background=True)
    assert queued.status in ("queued", "in_progress")
    row = calls.wait(create_call)
    assert row.status_code == 200 and row.prompt_tokens is None

    def finished() -> tuple[Response, str] | None:
        raw = client.responses.with_raw_response.retrieve(queued.id)
        found = raw.parse()
        if found.status in ("queued", "in_progress"):
            return None
        return found, raw.headers["x-plumbline-call-id"]

    done, settling_call = wait_for(finished, timeout=30, what="the background response")
    again = client.responses.with_raw_response.retrieve(queued.id)
    settled = calls.wait(settling_call)
    assert done.usage is not None
    assert (settled.prompt_tokens, settled.completion_tokens) == (
        done.usage.input_tokens,
        done.usage.output_tokens,
    )
    assert settled.output_cost == pytest.approx(done.usage.output_tokens * 1.5 / 1e6)
    # Seen again: recorded, without its tokens a second time.
    assert calls.wait(again.headers["x-plumbline-call-id"]).completion_tokens is None
    # A finished response cannot be cancelled: vLLM's own 400, passed through.
    with pytest.raises(openai.BadRequestError, match="Cannot cancel"):
        client.responses.cancel(queued.id)


def test_a_streamed_background_response_is_metered_by_its_stream(
    client: openai.OpenAI, calls: CallReader
) -> None:
    with client.responses.with_streaming_response.create(
        model="tiny", input=QUESTION, max_output_tokens=8, background=True, stream=True
    ) as raw:
        call_id = raw.headers["x-plumbline-call-id"]
        events = list(raw.parse())
    final = next(e.response for e in events if e.type == "response.completed")
    row = calls.wait(call_id)
    assert final.usage is not None and row.completion_tokens == final.usage.output_tokens
    retrieved = client.responses.with_raw_response.retrieve(final.id)
    assert retrieved.parse().status == final.status
    assert calls.wait(retrieved.headers["x-plumbline-call-id"]).completion_tokens is None


def test_async_sdk_creates_retrieves_and_streams(gateway: GatewayProcess, team_key: str) -> None:
    async def run() -> tuple[str, str, str]:
        async with openai.AsyncOpenAI(
            base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0
        ) as sdk:
            created = await sdk.responses.create(model="tiny", input=QUESTION, max_output_tokens=8)
            retrieved = await sdk.responses.retrieve(created.id)
            stream = await sdk.responses.create(
                model="tiny",
                input="Go on.",
                previous_response_id=created.id,
                max_output_tokens=8,
                stream=True,
            )
            chained = [e.response.id async for e in stream if e.type == "response.completed"]
            again = await sdk.responses.retrieve(chained[0])
            return created.output_text, retrieved.output_text, again.id

    created_text, retrieved_text, chained_id = asyncio.run(run())
    assert created_text == retrieved_text != "" and chained_id.startswith("resp_")


def test_another_replica_and_a_restarted_gateway_know_the_owner(
    client: openai.OpenAI, simulator: SimulatorProcess, database: str, team_key: str
) -> None:
    created, _ = _create(client)
    replica = GatewayProcess(store_config(simulator.base_url), database)
    with (
        replica,
        openai.OpenAI(base_url=f"{replica.url}/v1", api_key=team_key, max_retries=0) as sdk,
    ):
        assert sdk.responses.retrieve(created.id).output_text == created.output_text


def test_another_teams_sdk_gets_not_found(
    client: openai.OpenAI, gateway: GatewayProcess, other_team_key: str
) -> None:
    created, _ = _create(client)
    with openai.OpenAI(
        base_url=f"{gateway.url}/v1", api_key=other_team_key, max_retries=0
    ) as other:
        with pytest.raises(openai.NotFoundError, match=f"Response with id '{created.id}'"):
            other.responses.retrieve(created.id)
        with pytest.raises(openai.NotFoundError):
            other.responses.cancel(created.id)
        with pytest.raises(openai.NotFoundError):
            other.responses.create(model="tiny", input="hi", previous_response_id=created.id)


def test_a_down_owner_backend_is_a_503_and_a_running_one_cancels(database: str) -> None:
    key = issue_key(database, "team-down")
    slow = simulator_config(
        enable_responses_store=True, timing={"prefill_ms_per_token": 0.05, "decode_ms_per_token": 4}
    )
    with SimulatorProcess(slow) as sim:
        config = store_config(sim.base_url, max_stored_responses_per_team=3)
        gateway = GatewayProcess(config, database)
        with (
            gateway,
            openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as sdk,
        ):
            kept = sdk.responses.create(model="tiny", input=QUESTION, max_output_tokens=4)
            # Slow enough that the cancel finds it running, whatever the machine's load.
            sim.set_timing({"prefill_ms_per_token": 0.05, "decode_ms_per_token": 2000})
            running = sdk.responses.create(
                model="tiny", input=QUESTION, max_output_tokens=200, background=True
            )
            cancelled = sdk.responses.cancel(running.id)
            assert cancelled.status == "cancelled"
            assert sdk.responses.retrieve(running.id).status == "cancelled"
            sdk.responses.create(model="tiny", input="one more", max_output_tokens=1, store=True)
            with pytest.raises(openai.RateLimitError, match="3 stored responses"):
                sdk.responses.create(model="tiny", input="too many", max_output_tokens=1)
            sim.stop()
            with pytest.raises(openai.InternalServerError, match="cannot serve it") as error:
                sdk.responses.retrieve(kept.id)
            assert error.value.status_code == 503
            with pytest.raises(openai.InternalServerError, match="cannot serve it"):
                sdk.responses.create(
                    model="tiny", input="hi", previous_response_id=kept.id, store=False
                )
