"""A real vLLM started with `--otlp-traces-endpoint` at a real Phoenix: each request's
`llm_request` span lands in the caller's trace, under the span its `traceparent` names, with
the engine's queue, prefill and decode times and the request's own token counts."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_spans import new_span_id, new_trace_id, traceparent
from tests.support.phoenix import PhoenixProcess, running_phoenix
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]
# vLLM 0.32's names (vllm/tracing/utils.py SpanAttributes): pre-standard, not today's GenAI ones.
ENGINE_TIMES = (
    "gen_ai.latency.time_in_queue",
    "gen_ai.latency.time_in_model_prefill",
    "gen_ai.latency.time_in_model_decode",
    "gen_ai.latency.time_to_first_token",
    "gen_ai.latency.e2e",
)


@pytest.fixture(scope="module")
def phoenix() -> Iterator[PhoenixProcess]:
    """A real Phoenix on loopback for this module."""
    with running_phoenix() as server:
        yield server


@pytest.fixture(scope="module")
def traced_vllm(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    phoenix: PhoenixProcess,
) -> Iterator[httpx.Client]:
    """A real vLLM exporting its spans to `phoenix`."""
    flags = ("--otlp-traces-endpoint", phoenix.otlp_traces_url)
    yield from launched_server(request, tmp_path_factory, *flags)


def test_the_engine_span_is_a_child_of_the_callers_span_with_its_engine_times(
    traced_vllm: httpx.Client, phoenix: PhoenixProcess
) -> None:
    trace_id, parent_id = new_trace_id(), new_span_id()
    body = {"model": "tiny", "prompt": "Hello there", "max_tokens": 5, "temperature": 0}
    reply = traced_vllm.post(
        "/v1/completions",
        json=body,
        headers={"traceparent": traceparent(trace_id, parent_id), "X-Request-Id": "span-1"},
    )
    assert reply.status_code == 200, reply.text
    usage = reply.json()["usage"]

    span = phoenix.wait_for_span("llm_request", trace_id)

    assert (span.trace_id, span.parent_id) == (trace_id, parent_id)
    assert span.span_id not in (parent_id, "")
    times = {name: span.attributes.get(name) for name in ENGINE_TIMES}
    assert all(isinstance(t, float) and t >= 0 for t in times.values()), times
    assert span.attributes["gen_ai.usage.prompt_tokens"] == usage["prompt_tokens"]
    assert span.attributes["gen_ai.usage.completion_tokens"] == usage["completion_tokens"] == 5
    assert span.attributes["gen_ai.request.max_tokens"] == 5
    assert "span-1" in span.attributes["gen_ai.request.id"]


def test_an_unsampled_traceparent_gets_no_engine_span(
    traced_vllm: httpx.Client, phoenix: PhoenixProcess
) -> None:
    unsampled, sampled = new_trace_id(), new_trace_id()
    body = {"model": "tiny", "prompt": "Hi", "max_tokens": 2, "temperature": 0}
    for trace_id, is_sampled in ((unsampled, False), (sampled, True)):
        header = traceparent(trace_id, new_span_id(), sampled=is_sampled)
        reply = traced_vllm.post("/v1/completions", json=body, headers={"traceparent": header})
        assert reply.status_code == 200, reply.text

    # The sampled request was sent second: once its span is stored, the first one's had its turn.
    phoenix.wait_for_span("llm_request", sampled)
    assert phoenix.spans(unsampled) == []


@pytest.fixture(scope="module")
def traced_gateway(
    traced_vllm: httpx.Client, phoenix: PhoenixProcess
) -> Iterator[tuple[GatewayProcess, str]]:
    """The gateway in front of the traced vLLM, exporting its spans to the same Phoenix; its db."""
    env = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": phoenix.otlp_traces_url,
        "OTEL_SERVICE_NAME": "plumbline-gateway",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    with postgres_database("plumbline_engine_spans") as database:
        config = gateway_config(str(traced_vllm.base_url).rstrip("/"))
        with GatewayProcess(config, database, env=env) as gateway:
            yield gateway, database


def test_a_call_through_the_gateway_is_one_trace_client_gateway_engine(
    traced_gateway: tuple[GatewayProcess, str], phoenix: PhoenixProcess
) -> None:
    gateway, database = traced_gateway
    key = issue_key(database, "traced-team")
    trace_id, client_span = new_trace_id(), new_span_id()
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as sdk:
        raw = sdk.completions.with_raw_response.create(
            model="tiny",
            prompt="Hello there",
            max_tokens=5,
            temperature=0,
            extra_headers={"traceparent": traceparent(trace_id, client_span)},
        )
    call_id = raw.headers["x-plumbline-call-id"]
    reader = CallReader(database)
    try:
        row = reader.wait(call_id)
    finally:
        reader.close()

    gateway_span = phoenix.wait_for_span("text_completion tiny", trace_id)
    engine_span = phoenix.wait_for_span("llm_request", trace_id)

    # The client's span -> the gateway's span -> vLLM's engine span, in the client's trace.
    assert gateway_span.parent_id == client_span
    assert engine_span.parent_id == gateway_span.span_id
    assert (row.trace_id, row.span_id) == (trace_id, gateway_span.span_id)
    assert gateway_span.attributes["gen_ai.usage.input_tokens"] == row.prompt_tokens
    assert gateway_span.attributes["gen_ai.usage.output_tokens"] == row.completion_tokens == 5
    assert engine_span.attributes["gen_ai.usage.prompt_tokens"] == row.prompt_tokens
    # The real vLLM's answer id and model, as recorded, survive Phoenix's round trip.
    assert row.response_id is not None and row.response_id.startswith("cmpl-")
    assert gateway_span.attributes["gen_ai.response.id"] == row.response_id == raw.parse().id
    assert gateway_span.attributes["gen_ai.response.model"] == row.response_model == "tiny"
