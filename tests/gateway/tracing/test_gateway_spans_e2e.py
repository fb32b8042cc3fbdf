"""A gateway call with a client parent span is its child span, carrying its row's values."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[GatewayProcess, OtlpReceiver, str, str]]:
    """Gateway, collector, database and a key of `team-a` (which stores bodies)."""
    with (
        SimulatorProcess(simulator_config()) as sim,
        postgres_database() as database,
        OtlpReceiver() as receiver,
    ):
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_EXPORTER_OTLP_HEADERS": "x-collector-key=k%3D1",
            "OTEL_SERVICE_NAME": "gw-e2e",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_BSP_SCHEDULE_DELAY": "20",
        }
        with GatewayProcess(gateway_config(sim.base_url), database, env=env) as gateway:
            yield gateway, receiver, database, issue_key(database, "team-a", store_bodies=True)


def test_a_call_with_a_client_parent_is_a_child_span_carrying_its_rows_values(
    stack: tuple[GatewayProcess, OtlpReceiver, str, str],
) -> None:
    gateway, receiver, database, key = stack
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=[{"role": "user", "content": "What is the indemnity cap?"}],
            max_tokens=16,
            seed=3,
            temperature=0.5,
            stream=False,
            extra_headers={
                "traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01",
                "X-Plumbline-Feature": "chat",
            },
        )
    call_id = raw.headers["x-plumbline-call-id"]
    reader = CallReader(database)
    row = reader.wait(call_id)
    reader.close()
    received = wait_for(lambda: receiver.span_of(call_id), timeout=30, what="the call's span")
    span, attrs = received.span, received.attributes
    assert span.trace_id.hex() == CLIENT_TRACE and span.parent_span_id.hex() == CLIENT_SPAN
    assert received.headers["x-collector-key"] == "k=1"
    assert received.resource["service.name"] == "gw-e2e"
    assert span.name == "chat tiny"
    assert attrs["gen_ai.usage.input_tokens"] == row.prompt_tokens
    assert attrs["gen_ai.usage.output_tokens"] == row.completion_tokens
    assert attrs["plumbline.request_id"] == row.request_id
    assert attrs["plumbline.e2e_ms"] == row.e2e_ms
    assert attrs["plumbline.engine.queue_ms"] == row.engine_queue_ms
    assert attrs["plumbline.cost.output"] == row.output_cost
    assert (row.trace_id, row.span_id) == (CLIENT_TRACE, span.span_id.hex())
    assert row.response_id is not None and row.response_id.startswith("chatcmpl-")
    assert attrs["gen_ai.response.id"] == row.response_id
    assert attrs["gen_ai.response.model"] == row.response_model == raw.parse().model
    # The read API shows them like every column.
    shown = httpx.get(
        f"{gateway.url}/api/calls/{call_id}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    assert (shown["response_id"], shown["response_model"]) == (row.response_id, row.response_model)


def test_a_streamed_call_of_a_team_that_stores_bodies_has_its_messages_as_stored(
    stack: tuple[GatewayProcess, OtlpReceiver, str, str],
) -> None:
    gateway, receiver, database, key = stack
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client:
        with client.chat.completions.with_streaming_response.create(
            model="tiny",
            messages=[{"role": "user", "content": "Mail alice@example.com the cap"}],
            max_tokens=8,
            stream=True,
            extra_headers={"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"},
        ) as streamed:
            call_id = streamed.headers["x-plumbline-call-id"]
            chunks = list(streamed.parse())
    reader = CallReader(database)
    row = reader.wait(call_id)
    reader.close()
    received = wait_for(lambda: receiver.span_of(call_id), timeout=30, what="the call's span")
    attrs = received.attributes
    assert attrs["gen_ai.response.id"] == row.response_id == chunks[0].id
    assert attrs["gen_ai.response.model"] == row.response_model == chunks[0].model
    (asked,) = orjson.loads(attrs["gen_ai.input.messages"])
    assert asked["role"] == "user" and asked["parts"][0]["content"].startswith("Mail [REDACTED")
    (answer,) = orjson.loads(attrs["gen_ai.output.messages"])
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert answer["parts"] == [{"type": "text", "content": text}]
    assert answer["finish_reason"] == row.finish_reason
    assert "alice@example.com" not in str(attrs)
