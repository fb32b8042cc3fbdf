"""An inference-only key attacks: reads nothing, makes no key, acts for no team, gains no scope."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gateway.auth.scopes import EVALS, INFERENCE, READ
from tests.security.scoped_keys import filled, route_scopes, scoped_key
from tests.security.stack import SecurityStack, security_stack
from tests.support.calls import CallReader

pytestmark = pytest.mark.xdist_group("security-scope-attacks")
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("postgres", tmp_path_factory.mktemp("attack")) as running:
        yield running


def _client(stack: SecurityStack, key: str, **headers: str) -> httpx.Client:
    return httpx.Client(
        base_url=stack.url, headers={"Authorization": f"Bearer {key}", **headers}, timeout=30
    )


def test_an_inference_key_reads_nothing_not_even_its_own_calls(stack: SecurityStack) -> None:
    key = scoped_key(stack, "alpha", [INFERENCE])
    with _client(stack, key) as client:
        made = client.post("/v1/chat/completions", json=CHAT)
        assert made.status_code == 200, made.text
        own_call = made.headers["x-plumbline-call-id"]
        CallReader(stack.database_url).wait(own_call)
        for (method, path), declared in sorted(route_scopes().items()):
            if not declared & {READ, EVALS}:
                continue
            target = filled(path.replace("{call_id}", own_call))
            # Forged hints of a scope in the query or headers change nothing.
            response = client.request(
                method,
                target,
                params={"scopes": "read,evals", "scope": "admin"},
                headers={"X-Plumbline-Scopes": "read,evals", "X-Plumbline-Team": "alpha"},
                json={} if method == "POST" else None,
            )
            assert response.status_code == 403, (method, path, response.text)
            assert own_call not in response.text and "alpha" in response.text
    assert made.json()["choices"][0]["message"]["content"]


def test_an_inference_key_makes_no_keys_and_gains_no_scope(stack: SecurityStack) -> None:
    key = scoped_key(stack, "alpha", [INFERENCE])
    prefix = key[3:13]
    attempts = [
        ("POST", "/api/admin/keys", {"team": "alpha", "scopes": ["read", "evals"]}),
        ("POST", "/api/admin/keys", {"team": "alpha", "admin": True}),
        ("PATCH", f"/api/admin/keys/{prefix}", {"scopes": ["read"]}),
        ("PATCH", f"/api/admin/keys/{prefix}", {"requests_per_minute": None}),
        ("POST", f"/api/admin/keys/{prefix}/rotate", {"grace_s": 0}),
        ("GET", "/api/admin/keys", None),
    ]
    with _client(stack, key) as client:
        for method, path, body in attempts:
            response = client.request(method, path, json=body)
            assert response.status_code == 403, (method, path, response.text)
            assert "needs an admin key" in response.json()["error"]["message"]
        # Its own key is untouched: still inference only, still the same key.
        assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
        assert client.get("/api/usage").status_code == 403
    with stack.api("admin") as admin:
        listed = admin.get("/api/admin/keys", params={"team": "alpha"}).json()["data"]
    mine = next(k for k in listed if k["prefix"] == prefix)
    assert mine["scopes"] == [INFERENCE] and mine["state"] == "active"
    assert not any(k["admin"] for k in listed)  # no admin key appeared in its team


def test_an_inference_key_cannot_act_for_a_team(stack: SecurityStack) -> None:
    key = scoped_key(stack, "alpha", [INFERENCE])
    for team in ("beta", "no-such-team"):
        with _client(stack, key, **{"X-Plumbline-Team": team}) as client:
            response = client.post("/v1/chat/completions", json=CHAT)
        assert response.status_code == 403, response.text
        assert "Only admin keys may set X-Plumbline-Team" in response.json()["error"]["message"]


def test_a_read_key_calling_a_model_is_refused_and_recorded(stack: SecurityStack) -> None:
    key = scoped_key(stack, "alpha", [READ])
    with _client(stack, key) as client:
        refused = client.post("/v1/chat/completions", json=CHAT)
        models = client.get("/v1/models")
    assert refused.status_code == 403 and models.status_code == 403
    message = refused.json()["error"]["message"]
    assert "`inference` scope" in message and "this key has: read" in message
    call = CallReader(stack.database_url).wait(refused.headers["x-plumbline-call-id"])
    assert call.status_code == 403 and call.team_id is not None
