"""A real gateway whose metrics collector is down or hangs: every call is answered and
recorded, and the failed exports are counted in /metrics."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_receiver import HungCollector, free_port_url
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
CALLS = 12
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


def _exports(page: str, outcome: str) -> float:
    line = f'plumbline_otlp_metric_exports_total{{outcome="{outcome}"}}'
    found = re.search(rf"^{re.escape(line)} (\S+)$", page, re.MULTILINE)
    assert found, f"{line} not in /metrics"
    return float(found.group(1))


@pytest.mark.parametrize("collector", ["down", "hung"])
def test_a_failing_collector_costs_no_call_and_its_failures_are_counted(
    collector: str, simulator: SimulatorProcess, database: str
) -> None:
    key = issue_key(database, f"team-{collector}")
    reader = CallReader(database)
    with HungCollector() as hung:
        url = hung.url if collector == "hung" else free_port_url()
        env = {
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{url}/v1/metrics",
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "authorization=Bearer%20metrics-secret",
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "300",
            "OTEL_METRIC_EXPORT_INTERVAL": "50",
        }
        gateway = GatewayProcess(gateway_config(simulator.base_url), database, env=env)
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

            def page_with_failures() -> str | None:
                page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
                return page if _exports(page, "failed") >= 2 else None

            page = wait_for(page_with_failures, timeout=60, what="failed exports counted")
            log = gateway.log_tail(400)
    reader.close()
    assert _exports(page, "exported") == 0
    assert "plumbline_otlp_metric_overflow_total 0.0" in page
    assert "metrics-secret" not in log
