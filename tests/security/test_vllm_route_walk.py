"""Every route vLLM 0.32 serves is metered, the gateway's own, an audited admin action or refused.

The route lists are vLLM's own OpenAPI documents (tests/fixtures/vllm_routes/openapi/, from a
dev-mode generate server with LoRA and scale-out, and a pooling server), so a route a new vLLM
adds fails here until docs/routes.md and the table decide it. Through a real gateway whose
backend is a listener that records every request: refused and operator paths, with a team key
or an admin key and under path tricks, never reach the backend.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gateway.api.backend_operation_specs import OPERATIONS
from gateway.api.vllm_route_table import METERED, OPERATOR, REFUSED, VLLM_ROUTES
from gateway.app import proxy_endpoints
from gateway.proxy.stored_responses import StoredResponsesEndpoint
from tests.support.databases import postgres_database
from tests.support.gateway_probes import is_probe
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Listener

pytestmark = pytest.mark.xdist_group("gateway-e2e")
TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_routes" / "openapi"
ROUTES_DOC = Path(__file__).resolve().parents[2] / "docs" / "routes.md"
# What the gateway's health monitor asks every backend.


def vllm_routes() -> list[tuple[str, str]]:
    """Every (method, path) of every captured vLLM route table."""
    found: set[tuple[str, str]] = set()
    for table in sorted(TABLES.glob("*.json")):
        found |= {(method, path) for method, path in json.loads(table.read_text())["routes"]}
    return sorted(found)


def test_every_captured_vllm_route_is_decided() -> None:
    routes = vllm_routes()
    assert len(routes) > 60, "the captured tables look truncated"
    undecided = sorted({path for _, path in routes} - set(VLLM_ROUTES))
    assert not undecided, f"vLLM routes with no decision in vllm_route_table.py: {undecided}"


def test_each_decision_is_served_as_it_says() -> None:
    proxied = proxy_endpoints()
    for path, decision in VLLM_ROUTES.items():
        if decision.decision == METERED and decision.detail == "StoredResponses":
            method = "POST" if path.endswith("/cancel") else "GET"
            concrete = path.replace("{response_id}", "resp_0123")
            assert StoredResponsesEndpoint().serves({"path": concrete, "method": method}), path
        elif decision.decision == METERED:
            assert path in proxied, f"{path} is said to be metered but no call kind serves it"
            assert type(proxied[path].kind).__name__ == decision.detail
        if decision.decision == OPERATOR:
            assert OPERATIONS[decision.detail].path == path
        if decision.decision in (REFUSED, OPERATOR):
            # A call kind added for a refused path would be served while the table says not.
            assert path not in proxied, f"{path} is refused in the table but proxied"


def test_docs_name_every_vllm_route() -> None:
    text = ROUTES_DOC.read_text()
    missing = [path for path in VLLM_ROUTES if f"`{path}`" not in text]
    assert not missing, f"docs/routes.md does not list {missing}"


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    with Listener() as heard:
        yield heard


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def gateway(listener: Listener, database: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(gateway_config(listener.url), database)
    with process:
        yield process


@pytest.fixture(scope="module")
def keys(database: str) -> dict[str, str]:
    return {"team": issue_key(database, "team-a"), "admin": issue_key(database, "ops", admin=True)}


def _not_probes(listener: Listener) -> list[str]:
    return [f"{h.method} {h.path}" for h in listener.requests() if not is_probe(h.method, h.path)]


def _assert_refused(resp: httpx.Response, path: str) -> None:
    assert resp.status_code in (404, 405), f"{path}: {resp.status_code} {resp.text[:200]}"
    error = resp.json()["error"]
    assert error["code"] == resp.status_code and error["type"]


@pytest.mark.parametrize("who", ["team", "admin"])
def test_refused_and_operator_routes_never_reach_a_backend(
    gateway: GatewayProcess, listener: Listener, keys: dict[str, str], who: str
) -> None:
    headers = {"Authorization": f"Bearer {keys[who]}"}
    closed = [
        (method, path)
        for method, path in vllm_routes()
        if VLLM_ROUTES[path].decision in (REFUSED, OPERATOR)
    ]
    with httpx.Client(base_url=gateway.url, headers=headers, timeout=30) as http:
        for method, path in closed:
            concrete = path.replace("{adapter_name}", "tiny-lora")
            resp = http.request(method, concrete, json={"model": "tiny", "lora_name": "x"})
            _assert_refused(resp, concrete)
            if VLLM_ROUTES[path].decision == OPERATOR:
                assert "/api/admin/backends/" in resp.json()["error"]["message"]
    assert _not_probes(listener) == []


TRICKS = [
    "/reset_prefix_cache/",
    "//reset_prefix_cache",
    "/RESET_PREFIX_CACHE",
    "/v1/../reset_prefix_cache",
    "/v1/chat/completions/../../collective_rpc",
    "/v1/chat/completions%2F..%2F..%2Fcollective_rpc",
    "/%72eset_prefix_cache",
    "/reset_prefix_cache?x=1",
    "/v1/chat/completions/",
    "//v1/chat/completions",
    "/V1/chat/completions",
    "/v1/chat/completions/batch/",
    "/v1/chat/completions;/reset_prefix_cache",
    "/inference/v1/generate/../../../sleep",
    "/v1/load_lora_adapter%00",
    "/v1/models/../../sleep",
]


@pytest.mark.parametrize("path", TRICKS)
def test_path_tricks_reach_no_unrouted_backend_path(
    gateway: GatewayProcess, listener: Listener, keys: dict[str, str], path: str
) -> None:
    before = len(_not_probes(listener))
    raw = httpx.URL(gateway.url).copy_with(raw_path=path.encode())
    headers = {"Authorization": f"Bearer {keys['admin']}"}
    with httpx.Client(timeout=30, follow_redirects=False) as http:
        resp = http.post(raw, headers=headers, json={"model": "tiny", "messages": []})
    # A redirect is never followed by the gateway; anything else is refused, or it reached a
    # call kind, whose path alone the backend is sent.
    assert resp.status_code in (307, 400, 404, 405), resp.text[:200]
    heard = _not_probes(listener)[before:]
    assert all(h.split()[1] in proxy_endpoints() for h in heard), heard
