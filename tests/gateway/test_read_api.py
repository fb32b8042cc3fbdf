"""The read API: calls filtered and paginated, one call with logprobs, usage; team-scoped."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess

pytestmark = pytest.mark.xdist_group("gateway-e2e")


def _get(gateway: GatewayProcess, key: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(
        f"{gateway.url}{path}",
        params=params,
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


@pytest.fixture(scope="module")
def traffic(
    gateway: GatewayProcess, team_key: str, other_team_key: str, calls: CallReader
) -> dict[str, list[str]]:
    """Calls of two teams on two features, all written before the tests look."""
    ids: dict[str, list[str]] = {"a-search": [], "a-chat": [], "b-chat": []}
    for key, label, feature, count in (
        (team_key, "a-search", "search", 7),
        (team_key, "a-chat", "chat", 3),
        (other_team_key, "b-chat", "chat", 4),
    ):
        with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client:
            for i in range(count):
                raw = client.chat.completions.with_raw_response.create(
                    model="tiny",
                    messages=[{"role": "user", "content": f"question {i}"}],
                    max_tokens=5,
                    extra_headers={"X-Plumbline-Feature": feature},
                )
                ids[label].append(raw.headers["x-plumbline-call-id"])
    for label_ids in ids.values():
        for call_id in label_ids:
            calls.wait(call_id)
    return ids


def test_calls_are_filtered_and_paginated(
    gateway: GatewayProcess, team_key: str, traffic: dict[str, list[str]]
) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"feature": "search", "limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = _get(gateway, team_key, "/api/calls", **params).json()
        seen += [row["id"] for row in page["data"]]
        assert all(row["feature"] == "search" for row in page["data"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(traffic["a-search"])
    assert seen == sorted(seen, reverse=True), "newest first"


def test_a_team_never_sees_another_teams_calls(
    gateway: GatewayProcess, team_key: str, other_team_key: str, traffic: dict[str, list[str]]
) -> None:
    b_ids = set(traffic["b-chat"])
    page = _get(gateway, team_key, "/api/calls", limit=500).json()
    assert b_ids.isdisjoint(row["id"] for row in page["data"])
    for call_id in b_ids:
        response = _get(gateway, team_key, f"/api/calls/{call_id}")
        assert response.status_code == 404
    usage = _get(gateway, team_key, "/api/usage").json()["data"]
    chat = [row for row in usage if row["feature"] == "chat"]
    assert [row["calls"] for row in chat] == [3]
    own = _get(gateway, other_team_key, f"/api/calls/{traffic['b-chat'][0]}")
    assert own.status_code == 200


def test_admin_sees_every_team(
    gateway: GatewayProcess, admin_key: str, traffic: dict[str, list[str]]
) -> None:
    page = _get(gateway, admin_key, "/api/calls", feature="chat", limit=500).json()
    ids = {row["id"] for row in page["data"]}
    assert set(traffic["a-chat"]) | set(traffic["b-chat"]) <= ids


def test_one_call_comes_with_its_logprobs(
    gateway: GatewayProcess, team_key: str, traffic: dict[str, list[str]]
) -> None:
    detail = _get(gateway, team_key, f"/api/calls/{traffic['a-chat'][0]}").json()
    assert detail["status_code"] == 200 and detail["feature"] == "chat"
    logprobs = detail["logprobs"]
    assert logprobs["format"] == "chat" and logprobs["top_k"] == 5
    entries = logprobs["choices"]["0"]
    assert len(entries) == detail["completion_tokens"] == logprobs["token_count"]
    assert set(entries[0]) == {"token", "logprob", "bytes", "top_logprobs"}
    assert detail["body"] is None, "bodies are off unless the team opted in"


def test_usage_by_feature_and_model(
    gateway: GatewayProcess, team_key: str, traffic: dict[str, list[str]]
) -> None:
    report = _get(gateway, team_key, "/api/usage").json()
    search = next(row for row in report["data"] if row["feature"] == "search")
    assert search["model"] == "tiny" and search["calls"] == 7 and search["errors"] == 0
    assert search["completion_tokens"] == 35
    assert search["output_cost"] == pytest.approx(35 * 1.5 / 1e6)
    assert search["e2e_p50_ms"] is not None and search["e2e_p95_ms"] >= search["e2e_p50_ms"]


def test_read_api_needs_a_key(gateway: GatewayProcess) -> None:
    response = httpx.get(f"{gateway.url}/api/calls", timeout=10)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "AuthenticationError"


def test_metrics_count_calls_without_prompt_text(
    gateway: GatewayProcess, traffic: dict[str, list[str]]
) -> None:
    text = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    assert "plumbline_calls_total{backend=" in text
    assert 'feature="search"' in text and 'team="team-a"' in text
    assert "plumbline_sink_database_up 1.0" in text
    assert "gen_ai_client_token_usage_bucket" in text
    assert "question 3" not in text
