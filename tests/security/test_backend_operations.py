"""Operator actions through `POST /api/admin/backends/{model}/{operation}`: admin only, audited.

The backend is a listener that records what reaches it, so each test sees exactly which path,
query and body the gateway sent, and to which backend.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.databases import postgres_database
from tests.support.gateway_probes import is_probe
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Listener

pytestmark = pytest.mark.xdist_group("gateway-e2e")
# Model names may hold slashes, as served names often do.
SLASHED = "meta-llama/Llama-3.1-8B"


@pytest.fixture(scope="module")
def backends() -> Iterator[tuple[Listener, Listener]]:
    with Listener(body=b'{"success":true}') as first, Listener(body=b'{"success":true}') as second:
        yield first, second


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def slashed_backend() -> Iterator[Listener]:
    with Listener(body=b'{"success":true}') as backend:
        yield backend


@pytest.fixture(scope="module")
def gateway(
    backends: tuple[Listener, Listener], slashed_backend: Listener, database: str
) -> Iterator[GatewayProcess]:
    config = gateway_config(backends[0].url)
    config["models"][0]["backends"].append({"url": backends[1].url, "api_key": "backend-secret"})
    config["models"].append({"name": SLASHED, "backends": [{"url": slashed_backend.url}]})
    process = GatewayProcess(config, database)
    with process:
        yield process


@pytest.fixture(scope="module")
def keys(database: str) -> dict[str, str]:
    return {"team": issue_key(database, "team-a"), "admin": issue_key(database, "ops", admin=True)}


def _operate(
    gateway: GatewayProcess, key: str, operation: str, body: dict[str, Any] | None = None
) -> httpx.Response:
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        return http.post(
            f"/api/admin/backends/tiny/{operation}",
            headers={"Authorization": f"Bearer {key}"},
            json=body,
        )


def _heard(listener: Listener) -> list[tuple[str, str, bytes]]:
    return [
        (h.method, h.path, h.body) for h in listener.requests() if not is_probe(h.method, h.path)
    ]


def test_a_team_key_is_refused_and_nothing_is_sent(
    gateway: GatewayProcess, backends: tuple[Listener, Listener], keys: dict[str, str]
) -> None:
    for operation in ("reset_prefix_cache", "sleep", "load_lora_adapter", "collective_rpc"):
        resp = _operate(gateway, keys["team"], operation)
        assert resp.status_code == 403, resp.text
        assert resp.json()["error"]["type"] == "PermissionDeniedError"
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        assert http.post("/api/admin/backends/tiny/sleep").status_code == 401
    assert _heard(backends[0]) == [] and _heard(backends[1]) == []


def test_an_action_goes_to_every_backend_and_is_audited(
    gateway: GatewayProcess, backends: tuple[Listener, Listener], keys: dict[str, str]
) -> None:
    resp = _operate(gateway, keys["admin"], "reset_prefix_cache")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {
        "model": "tiny",
        "operation": "reset_prefix_cache",
        "backends": [
            {"backend": 0, "status": 200, "answer": {"success": True}},
            {"backend": 1, "status": 200, "answer": {"success": True}},
        ],
    }
    assert _heard(backends[0])[-1][:2] == ("POST", "/reset_prefix_cache")
    second = [h for h in backends[1].requests() if h.path == "/reset_prefix_cache"]
    assert second[-1].headers["Authorization"] == "Bearer backend-secret"
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        audit = http.get(
            "/api/admin/audit",
            params={"action": "backend.reset_prefix_cache"},
            headers={"Authorization": f"Bearer {keys['admin']}"},
        ).json()["data"]
    assert audit[0]["target"] == "tiny"
    assert audit[0]["details"] == {"backends": [0, 1], "arguments": {}}
    assert audit[0]["actor"].startswith("key ")


def test_one_backend_by_index_with_its_query_and_body(
    gateway: GatewayProcess, backends: tuple[Listener, Listener], keys: dict[str, str]
) -> None:
    before = len(_heard(backends[0]))
    resp = _operate(gateway, keys["admin"], "sleep", {"backend": 1, "level": 2})
    assert resp.status_code == 200 and [b["backend"] for b in resp.json()["backends"]] == [1]
    assert _heard(backends[1])[-1][:2] == ("POST", "/sleep?level=2")
    resp = _operate(
        gateway, keys["admin"], "pause", {"backend": 1, "mode": "wait", "clear_cache": False}
    )
    assert _heard(backends[1])[-1][1] == "/pause?mode=wait&clear_cache=false"
    lora = {"backend": 1, "lora_name": "legal-v2", "lora_path": "/models/adapters/legal-v2"}
    assert _operate(gateway, keys["admin"], "load_lora_adapter", lora).status_code == 200
    method, path, body = _heard(backends[1])[-1]
    assert (method, path) == ("POST", "/v1/load_lora_adapter")
    assert json.loads(body) == {"lora_name": "legal-v2", "lora_path": "/models/adapters/legal-v2"}
    assert len(_heard(backends[0])) == before


@pytest.mark.parametrize(
    ("operation", "body", "status"),
    [
        ("collective_rpc", None, 404),
        ("update_weights", None, 404),
        ("..%2Fcollective_rpc", None, 404),
        ("sleep", {"level": 3}, 400),
        ("sleep", {"lora_name": "x"}, 400),
        ("sleep", {"url": "http://169.254.169.254/"}, 400),
        ("reset_prefix_cache", {"backend": 2}, 400),
        ("reset_prefix_cache", {"backend": -1}, 400),
        ("load_lora_adapter", {"lora_name": "x"}, 400),
        ("load_lora_adapter", {"lora_name": "x", "lora_path": "org/hub-adapter"}, 400),
        ("load_lora_adapter", {"lora_name": "x", "lora_path": "/models/../etc"}, 400),
        ("load_lora_adapter", {"lora_name": "../x", "lora_path": "/models/x"}, 400),
        ("load_lora_adapter", {"lora_name": "x", "lora_path": "/m/" + "a" * 2000}, 400),
        ("wake_up", {"tags": ["weights", "kv_cache", "weights"]}, 400),
    ],
)
def test_bad_actions_are_refused_before_any_backend_hears_them(
    gateway: GatewayProcess,
    backends: tuple[Listener, Listener],
    keys: dict[str, str],
    operation: str,
    body: dict[str, Any] | None,
    status: int,
) -> None:
    before = [len(_heard(b)) for b in backends]
    resp = _operate(gateway, keys["admin"], operation, body)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["code"] == status
    assert [len(_heard(b)) for b in backends] == before


def test_an_unknown_model_is_a_404(gateway: GatewayProcess, keys: dict[str, str]) -> None:
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        resp = http.post(
            "/api/admin/backends/nope/reset_prefix_cache",
            headers={"Authorization": f"Bearer {keys['admin']}"},
        )
    assert resp.status_code == 404 and "nope" in resp.json()["error"]["message"]


def test_a_model_whose_name_holds_slashes_is_reached(
    gateway: GatewayProcess, slashed_backend: Listener, keys: dict[str, str]
) -> None:
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        resp = http.post(
            f"/api/admin/backends/{SLASHED}/reset_prefix_cache",
            headers={"Authorization": f"Bearer {keys['admin']}"},
        )
    assert resp.status_code == 200, resp.text
    assert resp.json()["model"] == SLASHED
    assert [(method, path) for method, path, _ in _heard(slashed_backend)] == [
        ("POST", "/reset_prefix_cache")
    ]
