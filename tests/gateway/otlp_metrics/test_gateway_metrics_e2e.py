"""A real gateway exports the GenAI histograms of its calls over OTLP; a receiver the test owns
decodes the protobuf, and names, units, buckets and values are those of the recorded rows."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.otlp_metrics.instruments import (
    INSTRUMENTS,
    OPERATION_DURATION,
    TIME_PER_OUTPUT_TOKEN,
    TIME_TO_FIRST_TOKEN,
    TOKEN_USAGE,
    Instrument,
)
from plumbline.models import Call
from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_metrics import ReceivedPoint, latest_points, of_metric
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
QUESTION: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "What is the indemnity cap in this contract?"}
]


@pytest.fixture(scope="module")
def simulators() -> Iterator[tuple[SimulatorProcess, SimulatorProcess]]:
    with (
        SimulatorProcess(simulator_config()) as generate,
        SimulatorProcess(
            simulator_config(runner="pooling", model_name="embed", max_model_len=512)
        ) as pooling,
    ):
        yield generate, pooling


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _config(simulators: tuple[SimulatorProcess, SimulatorProcess]) -> dict[str, Any]:
    generate, pooling = simulators
    config = gateway_config(generate.base_url)
    embed = {"name": "embed", "runner": "pooling", "backends": [{"url": pooling.base_url}]}
    config["models"] = [*config["models"], embed]
    return config


def _calls(gateway: GatewayProcess, key: str) -> list[str]:
    """Streamed and plain chat, a completion, an embedding and a refused call; their ids."""
    ids = []
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client:
        for _ in range(3):
            with client.chat.completions.with_streaming_response.create(
                model="tiny",
                messages=QUESTION,
                max_tokens=12,
                stream=True,
                stream_options={"include_usage": True},
            ) as stream:
                assert stream.status_code == 200
                for _ in stream.iter_lines():
                    pass
                ids.append(stream.headers["x-plumbline-call-id"])
        chat = client.chat.completions.with_raw_response.create(
            model="tiny", messages=QUESTION, max_tokens=8
        )
        completion = client.completions.with_raw_response.create(
            model="tiny", prompt="The indemnity cap is", max_tokens=6
        )
        embedding = client.embeddings.with_raw_response.create(model="embed", input="Paris")
        ids += [r.headers["x-plumbline-call-id"] for r in (chat, completion, embedding)]
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="tiny", messages=QUESTION, max_tokens=-1)
        ids.append(refused.value.response.headers["x-plumbline-call-id"])
    return ids


def _buckets(instrument: Instrument, values: list[float]) -> list[int]:
    counts = [0] * (len(instrument.bounds) + 1)
    for value in values:
        counts[bisect_left(instrument.bounds, value)] += 1
    return counts


def _check(points: list[ReceivedPoint], instrument: Instrument, values: list[float]) -> None:
    """The instrument's points together hold exactly `values` (counts, sum, buckets)."""
    mine = of_metric(points, instrument.name)
    assert mine, f"no {instrument.name} points"
    for point in mine:
        assert point.unit == instrument.unit
        assert tuple(point.point.explicit_bounds) == instrument.bounds
    assert sum(p.point.count for p in mine) == len(values)
    assert sum(p.point.sum for p in mine) == pytest.approx(sum(values), rel=1e-9)
    buckets = [sum(column) for column in zip(*(p.point.bucket_counts for p in mine), strict=True)]
    assert buckets == _buckets(instrument, values)


def _succeeded(row: Call) -> bool:
    return row.status_code < 400 and row.error_type is None and not row.cancelled


def test_calls_through_the_gateway_are_histograms_equal_to_their_rows(
    simulators: tuple[SimulatorProcess, SimulatorProcess], database: str
) -> None:
    key = issue_key(database, "team-metrics")
    reader = CallReader(database)
    with OtlpReceiver() as receiver:
        env = {
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{receiver.url}/v1/metrics",
            "OTEL_METRIC_EXPORT_INTERVAL": "100",
            "OTEL_SERVICE_NAME": "gw-metrics",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        }
        with GatewayProcess(_config(simulators), database, env=env) as gateway:
            rows = [reader.wait(call_id) for call_id in _calls(gateway, key)]

            def all_calls_exported() -> list[ReceivedPoint] | None:
                points = latest_points(receiver)
                durations = of_metric(points, OPERATION_DURATION.name)
                return points if sum(p.point.count for p in durations) == len(rows) else None

            points = wait_for(all_calls_exported, timeout=60, what="every call's duration")
    reader.close()
    assert {p.name for p in points} == {i.name for i in INSTRUMENTS}
    _check(points, OPERATION_DURATION, [r.e2e_ms / 1000 for r in rows])
    inputs = [float(r.prompt_tokens) for r in rows if r.prompt_tokens is not None]
    outputs = [
        float(r.completion_tokens)
        for r in rows
        if r.completion_tokens is not None and r.endpoint != "/v1/embeddings"
    ]
    tokens = of_metric(points, TOKEN_USAGE.name)
    _check([p for p in tokens if p.attributes["gen_ai.token.type"] == "input"], TOKEN_USAGE, inputs)
    _check(
        [p for p in tokens if p.attributes["gen_ai.token.type"] == "output"], TOKEN_USAGE, outputs
    )
    timed = [r for r in rows if _succeeded(r) and r.ttft_ms is not None]
    assert len(timed) == 3, "the three streamed calls have a first-token time"
    _check(points, TIME_TO_FIRST_TOKEN, [r.ttft_ms / 1000 for r in timed])
    per_token = [
        (r.e2e_ms - r.ttft_ms) / 1000 / (r.completion_tokens - 1)
        for r in timed
        if r.completion_tokens and r.completion_tokens > 1
    ]
    assert per_token
    _check(points, TIME_PER_OUTPUT_TOKEN, per_token)
    generate_port = int(simulators[0].base_url.rsplit(":", 1)[1])
    by_operation: dict[str, set[str]] = {}
    for point in of_metric(points, OPERATION_DURATION.name):
        attributes = point.attributes
        assert attributes["gen_ai.provider.name"] == "vllm"
        assert attributes["plumbline.team"] == "team-metrics"
        assert point.resource["service.name"] == "gw-metrics"
        assert point.resource["service.instance.id"]
        operation = attributes["gen_ai.operation.name"]
        by_operation.setdefault(operation, set()).add(attributes.get("error.type", ""))
        if operation != "embeddings" and "error.type" not in attributes:
            assert attributes["gen_ai.request.model"] == "tiny"
            assert attributes["server.address"] == "127.0.0.1"
            assert attributes["server.port"] == generate_port
    # The refused call (a 400 before any backend) is a chat duration with its error type.
    assert by_operation == {
        "chat": {"", "BadRequestError"},
        "text_completion": {""},
        "embeddings": {""},
    }


def _metrics_page(gateway: GatewayProcess) -> httpx.Response:
    return httpx.get(f"{gateway.url}/metrics", timeout=10)


def test_otlp_alone_turns_metrics_page_off_and_none_turns_both_off(
    simulators: tuple[SimulatorProcess, SimulatorProcess], database: str
) -> None:
    key = issue_key(database, "team-exporters")
    reader = CallReader(database)
    with OtlpReceiver() as receiver:
        for exporters in ("otlp", "none"):
            # The previous gateway has stopped: nothing more comes from it.
            before = len(receiver.metrics)
            env = {
                "OTEL_METRICS_EXPORTER": exporters,
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{receiver.url}/v1/metrics",
                "OTEL_METRIC_EXPORT_INTERVAL": "100",
            }
            with GatewayProcess(_config(simulators), database, env=env) as gateway:
                page = _metrics_page(gateway)
                assert page.status_code == 404
                assert "OTEL_METRICS_EXPORTER" in page.json()["error"]["message"]
                assert httpx.get(f"{gateway.url}/health", timeout=10).status_code == 200
                with openai.OpenAI(
                    base_url=f"{gateway.url}/v1", api_key=key, max_retries=0
                ) as client:
                    raw = client.chat.completions.with_raw_response.create(
                        model="tiny", messages=QUESTION, max_tokens=4
                    )
                reader.wait(raw.headers["x-plumbline-call-id"])
                if exporters == "otlp":
                    wait_for(
                        lambda: of_metric(latest_points(receiver), OPERATION_DURATION.name),
                        timeout=60,
                        what="OTLP metrics with Prometheus off",
                    )
            # The gateway has stopped: a running OTLP exporter would have made its final export.
            assert exporters == "otlp" or len(receiver.metrics) == before
    reader.close()


def test_an_exporter_the_gateway_lacks_stops_the_start_up_naming_the_variable(
    simulators: tuple[SimulatorProcess, SimulatorProcess], database: str
) -> None:
    env = {"OTEL_METRICS_EXPORTER": "console"}
    gateway = GatewayProcess(_config(simulators), database, env=env)
    with pytest.raises(RuntimeError, match="OTEL_METRICS_EXPORTER lists console"):
        gateway.start()
    gateway.stop()
