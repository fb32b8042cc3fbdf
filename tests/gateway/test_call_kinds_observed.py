"""Call kinds made visible: each row's endpoint, metrics labelled by it, usage and cost per kind."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
CHAT, COMPLETIONS, RESPONSES = "/v1/chat/completions", "/v1/completions", "/v1/responses"
# Calls sent per route: plain and streamed each.
SENT = {CHAT: 4, COMPLETIONS: 2, RESPONSES: 6}
FEATURE = {"X-Plumbline-Feature": "search"}


def _send(client: openai.OpenAI, endpoint: str, stream: bool) -> str:
    """One call of the given kind; its call id."""
    if endpoint == CHAT:
        raw: Any = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=[{"role": "user", "content": "hello"}],
            max_tokens=5,
            stream=stream,
            extra_headers=FEATURE,
        )
    elif endpoint == COMPLETIONS:
        raw = client.completions.with_raw_response.create(
            model="tiny", prompt="hello", max_tokens=5, stream=stream, extra_headers=FEATURE
        )
    else:
        raw = client.responses.with_raw_response.create(
            model="tiny", input="hello", max_output_tokens=5, stream=stream, extra_headers=FEATURE
        )
    call_id = str(raw.headers["x-plumbline-call-id"])
    parsed = raw.parse()
    if stream:
        for _ in parsed:
            pass
    return call_id


@pytest.fixture(scope="module")
def traffic(client: openai.OpenAI, calls: CallReader) -> dict[str, list[str]]:
    """Call ids per route, every call written."""
    ids: dict[str, list[str]] = {}
    for endpoint, count in SENT.items():
        ids[endpoint] = [_send(client, endpoint, stream=i % 2 == 1) for i in range(count)]
    for call_ids in ids.values():
        for call_id in call_ids:
            calls.wait(call_id)
    return ids


def _get(gateway: GatewayProcess, key: str, path: str, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{gateway.url}{path}", params=params, headers=headers, timeout=30)


def _samples(gateway: GatewayProcess, name: str) -> list[tuple[dict[str, str], float]]:
    text = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    return [
        (dict(s.labels), s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    ]


def _by_endpoint(samples: list[tuple[dict[str, str], float]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for labels, value in samples:
        totals[labels["endpoint"]] = totals.get(labels["endpoint"], 0.0) + value
    return totals


def test_each_row_records_its_route(calls: CallReader, traffic: dict[str, list[str]]) -> None:
    for endpoint, call_ids in traffic.items():
        assert {calls.wait(i).endpoint for i in call_ids} == {endpoint}


def test_metrics_count_calls_tokens_cost_and_latency_per_route(
    gateway: GatewayProcess, traffic: dict[str, list[str]]
) -> None:
    def counted() -> dict[str, float] | None:
        found = _by_endpoint(_samples(gateway, "plumbline_calls_total"))
        return found if found == {e: float(n) for e, n in SENT.items()} else None

    wait_for(counted, timeout=15, what="every call counted on /metrics")
    for name in ("plumbline_tokens_total", "plumbline_cost_total"):
        by_route = _by_endpoint(_samples(gateway, name))
        assert set(by_route) == set(SENT) and min(by_route.values()) > 0, name
    e2e = _by_endpoint(_samples(gateway, "plumbline_e2e_seconds_count"))
    overhead = _by_endpoint(_samples(gateway, "plumbline_overhead_seconds_count"))
    assert e2e == overhead == {e: float(n) for e, n in SENT.items()}
    ttft = _by_endpoint(_samples(gateway, "plumbline_ttft_seconds_count"))
    assert ttft[RESPONSES] >= SENT[RESPONSES] // 2, "streamed Responses calls time their TTFT"


def test_usage_and_cost_per_route(
    gateway: GatewayProcess, team_key: str, calls: CallReader, traffic: dict[str, list[str]]
) -> None:
    report = _get(gateway, team_key, "/api/usage").json()
    rows = {row["endpoint"]: row for row in report["data"] if row["feature"] == "search"}
    assert {e: r["calls"] for e, r in rows.items()} == SENT
    kinds = {k["endpoint"]: k for k in report["by_endpoint"]}
    assert {e: k["calls"] for e, k in kinds.items()} == SENT
    for endpoint, call_ids in traffic.items():
        recorded = [calls.wait(i) for i in call_ids]
        cost = sum((c.input_cost or 0) + (c.output_cost or 0) for c in recorded)
        assert kinds[endpoint]["cost"] == pytest.approx(cost) and cost > 0
        tokens = sum(c.completion_tokens or 0 for c in recorded)
        assert kinds[endpoint]["completion_tokens"] == tokens
    costs = [k["cost"] for k in report["by_endpoint"]]
    assert costs == sorted(costs, reverse=True)
    only = _get(gateway, team_key, "/api/usage", endpoint=RESPONSES).json()
    assert {r["endpoint"] for r in only["data"]} == {RESPONSES}
    assert [k["endpoint"] for k in only["by_endpoint"]] == [RESPONSES]


def test_the_call_list_filters_by_route(
    gateway: GatewayProcess, team_key: str, traffic: dict[str, list[str]]
) -> None:
    for endpoint, call_ids in traffic.items():
        page = _get(gateway, team_key, "/api/calls", endpoint=endpoint, limit=500).json()
        assert {row["endpoint"] for row in page["data"]} == {endpoint}
        assert {row["id"] for row in page["data"]} == set(call_ids)
    none = _get(gateway, team_key, "/api/calls", endpoint="/v1/made-up").json()
    assert none["data"] == []


def test_an_endpoint_filter_out_of_bounds_is_a_clear_400(
    gateway: GatewayProcess, team_key: str, traffic: dict[str, list[str]]
) -> None:
    for path in ("/api/calls", "/api/usage"):
        response = _get(gateway, team_key, path, endpoint="/v1/" + "x" * 200)
        assert response.status_code == 400, response.text
        assert "endpoint" in response.json()["error"]["message"]
        nul = _get(gateway, team_key, path, endpoint="/v1/\x00")
        assert nul.status_code in (200, 400), nul.text
