"""Key scopes: every route declares one, and a key is refused exactly where it lacks it.

The routes come from the app's own route table, so a new route without a declared scope fails
`test_every_route_declares_a_scope` until it uses a scoped caller dependency or `PublicRoute`.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gateway.auth.scopes import ADMIN, EVALS, INFERENCE, KEY_SCOPES, READ, ROUTE_SCOPES
from tests.security.scoped_keys import PUBLIC, filled, route_scopes, scoped_key
from tests.security.stack import SecurityStack, security_stack

pytestmark = pytest.mark.xdist_group("security-scopes")
# Proxied by the ASGI entry ahead of the route table (gateway/proxy/stored_responses.py).
STORED_RESPONSES = {
    ("GET", "/v1/responses/{response_id}"): INFERENCE,
    ("POST", "/v1/responses/{response_id}/cancel"): INFERENCE,
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("postgres", tmp_path_factory.mktemp("scopes")) as running:
        yield running


def _needed() -> dict[tuple[str, str], str]:
    """The scope each keyed route needs (public routes left out)."""
    needed = dict(STORED_RESPONSES)
    for route, declared in route_scopes().items():
        if declared != {PUBLIC}:
            (needed[route],) = declared
    return needed


def _send(client: httpx.Client, method: str, path: str) -> httpx.Response:
    body = {} if method in ("POST", "PATCH", "PUT") else None
    path = filled(path.replace("{response_id}", "resp_0"))
    return client.request(method, path, json=body)


def test_every_route_declares_a_scope() -> None:
    table = route_scopes()
    assert len(table) > 100  # the proxied and refused vLLM paths too
    undeclared = sorted(route for route, declared in table.items() if not declared)
    assert not undeclared, (
        f"routes declaring no scope (use a scoped caller or PublicRoute): {undeclared}"
    )
    several = sorted(route for route, declared in table.items() if len(declared) > 1)
    assert not several, f"routes declaring more than one scope: {several}"
    assert all(d <= {*ROUTE_SCOPES, PUBLIC} for d in table.values())
    needed = _needed()
    assert needed[("POST", "/v1/chat/completions")] == INFERENCE
    assert needed[("GET", "/v1/models")] == INFERENCE
    assert needed[("GET", "/api/calls")] == READ
    assert needed[("GET", "/api/dashboard/traffic")] == READ
    assert needed[("POST", "/api/evals/suites")] == EVALS
    assert needed[("POST", "/api/admin/keys")] == ADMIN
    assert table[("GET", "/health")] == {PUBLIC}
    by_scope = {scope: sum(1 for s in needed.values() if s == scope) for scope in ROUTE_SCOPES}
    assert min(by_scope.values()) >= 5, by_scope


@pytest.mark.parametrize("scope", KEY_SCOPES)
def test_a_single_scope_key_is_refused_exactly_where_another_scope_is_needed(
    stack: SecurityStack, scope: str
) -> None:
    key = scoped_key(stack, "alpha", [scope])
    refused = allowed = 0
    with httpx.Client(
        base_url=stack.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        for (method, path), needs in sorted(_needed().items()):
            response = _send(client, method, path)
            where = f"{method} {path} needs {needs}, key has {scope}"
            if needs == scope:
                assert response.status_code != 403, (where, response.text)
                assert response.status_code < 500, (where, response.text)
                allowed += 1
                continue
            assert response.status_code == 403, (where, response.text)
            error = response.json()["error"]
            if path in ("/v1/messages", "/v1/messages/count_tokens"):  # Anthropic's shape
                assert error["type"] == "permission_error", (where, error)
            else:
                assert set(error) == {"message", "type", "param", "code"}
                assert error["type"] == "PermissionDeniedError"
            if needs == ADMIN:
                assert "needs an admin key" in error["message"], where
            else:
                assert f"`{needs}` scope" in error["message"], where
            assert f"this key has: {scope}" in error["message"] or (
                f"scopes: {scope}" in error["message"]
            ), (where, error["message"])
            refused += 1
    assert refused >= 20 and allowed >= 5, (refused, allowed)


def test_combined_scopes_and_legacy_keys(stack: SecurityStack) -> None:
    both = scoped_key(stack, "alpha", [INFERENCE, READ])
    headers = {"Authorization": f"Bearer {both}"}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as client:
        assert client.get("/api/calls").status_code == 200
        assert client.get("/v1/models").status_code == 200
        refused = client.get("/api/evals/suites")
    assert refused.status_code == 403
    assert "this key has: inference, read" in refused.json()["error"]["message"]
    # The stack's keys were made without scopes, as before scopes existed: all three powers.
    with stack.api("alpha") as legacy:
        for path in ("/api/calls", "/api/evals/suites", "/v1/models"):
            assert legacy.get(path).status_code == 200, path
        assert legacy.get("/api/admin/keys").status_code == 403
