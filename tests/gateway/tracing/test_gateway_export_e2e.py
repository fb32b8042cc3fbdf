"""A real gateway with the standard OTEL_* variables set: a collector that hangs costs no call,
the export counters are in /metrics, and an unsupported protocol stops the start-up clearly."""

from __future__ import annotations

import re
from collections.abc import Iterator

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from plumbline.blocking_http import BlockingHttp
from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_receiver import HungCollector
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("gateway-e2e")
# More calls than the span queue (OTEL_BSP_MAX_QUEUE_SIZE below) holds.
CALLS = 20
QUESTION: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "What is the indemnity cap in this contract?"}
]


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config()) as sim:
        yield sim


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _otel_env(endpoint: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20collector-secret",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "300",
        "OTEL_BSP_MAX_QUEUE_SIZE": "8",
        "OTEL_BSP_SCHEDULE_DELAY": "20",
    }


def _metric(text: str, line: str) -> float:
    found = re.search(rf"^{re.escape(line)} (\S+)$", text, re.MULTILINE)
    assert found, f"{line} not in /metrics"
    return float(found.group(1))


def _dropped(text: str) -> float:
    reasons = ("queue_full", "export_failed", "unbuildable")
    return sum(
        _metric(text, f'plumbline_trace_spans_dropped_total{{reason="{reason}"}}')
        for reason in reasons
    )


def test_a_hung_collector_costs_no_call_and_the_counters_are_in_metrics(
    simulator: SimulatorProcess, database: str
) -> None:
    key = issue_key(database, "team-a")
    config = gateway_config(simulator.base_url)
    reader = CallReader(database)
    with HungCollector() as hung:
        gateway = GatewayProcess(config, database, env=_otel_env(hung.url))
        with (
            gateway,
            openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client,
        ):
            for _ in range(CALLS):
                raw = client.chat.completions.with_raw_response.create(
                    model="tiny", messages=QUESTION, max_tokens=8
                )
                assert raw.http_response.status_code == 200
                assert reader.wait(raw.headers["x-plumbline-call-id"]).status_code == 200
            pages: list[str] = []

            def all_dropped() -> bool:
                with BlockingHttp() as http:
                    page = http.request(
                        "GET", f"{gateway.url}/metrics", timeout_s=10, read_limit=2**22
                    )
                pages.append(page.body.decode())
                return _dropped(pages[-1]) == CALLS

            # Every span is dropped in the end: for a full queue or a failed export.
            wait_until(all_dropped, timeout=120, what=f"{CALLS} spans counted as dropped")
            log = gateway.log_tail(400)
    reader.close()
    assert _metric(pages[-1], "plumbline_trace_spans_exported_total") == 0
    assert "collector-secret" not in log


def test_grpc_stops_the_start_up_with_what_to_set_instead(
    simulator: SimulatorProcess, database: str
) -> None:
    env = _otel_env("http://127.0.0.1:4317") | {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    gateway = GatewayProcess(gateway_config(simulator.base_url), database, env=env)
    with pytest.raises(RuntimeError, match="http/protobuf"):
        gateway.start()
    gateway.stop()
