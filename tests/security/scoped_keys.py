"""What the key-scope tests share: each route's declared scope, keys made through the admin API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from prometheus_client.parser import text_string_to_metric_families
from starlette.routing import Route

from gateway.api.deps import ScopeCheck
from gateway.app import create_app
from gateway.auth.scopes import no_key_needed
from gateway.config import GatewayConfig
from gateway.proxy.endpoint import ProxyEndpoint
from plumbline.settings import Settings
from tests.security.stack import SecurityStack

PUBLIC = "public"
# FastAPI's own pages: the schema and its viewer, built by FastAPI with no dependencies.
FASTAPI_PAGES = {"/api/openapi.json", "/api/docs", "/docs/oauth2-redirect"}
# Path parameters: values nothing has (the answer to a held scope is then a 404 or a 4xx).
FILLERS = {
    "prefix": "0123456789",
    "team": "alpha",
    "model": "tiny",
    "operation": "reset_prefix_cache",
    "question_key": "q1",
    "call_id": "0" * 26,
    "rest": "x",
    "build": "x",
    "name": "x",
}


def _declared(top: Dependant) -> set[str]:
    """The scopes a FastAPI route's dependencies declare (PUBLIC for `no_key_needed`)."""
    found: set[str] = set()
    pending = [top]
    while pending:
        dependant = pending.pop()
        if isinstance(dependant.call, ScopeCheck):
            found.add(dependant.call.scope)
        elif dependant.call is no_key_needed:
            found.add(PUBLIC)
        pending.extend(dependant.dependencies)
    return found


def route_scopes() -> dict[tuple[str, str], set[str]]:
    """Every (method, path) the app serves with the scopes it declares (empty: none)."""
    app = create_app(Settings(), GatewayConfig(models=[{"name": "m", "backends": [{"url": "x"}]}]))
    table: dict[tuple[str, str], set[str]] = {}

    def walk(routes: Any) -> Iterator[tuple[str, set[str], set[str]]]:
        for route in routes:
            if isinstance(route, APIRoute):
                yield route.path_format, set(route.methods), _declared(route.dependant)
            elif hasattr(route, "effective_route_contexts"):
                # An included router: its routes with the router's own dependencies applied.
                for context in route.effective_route_contexts():
                    yield context.path_format, set(context.methods), _declared(context.dependant)
            elif isinstance(route, Route) and isinstance(route.endpoint, ProxyEndpoint):
                yield route.path_format, set(route.methods or ()), {route.endpoint.scope}
            elif isinstance(route, Route):
                declared = {PUBLIC} if route.path_format in FASTAPI_PAGES else set()
                yield route.path_format, set(route.methods or ()), declared
            elif hasattr(route, "routes"):
                yield from walk(route.routes)

    for path, methods, declared in walk(app.routes):
        for method in methods - {"HEAD"}:
            table[(method, path)] = declared
    return table


def filled(path: str) -> str:
    """A path with each parameter set to a value nothing has."""
    for name, value in FILLERS.items():
        path = path.replace("{" + name + "}", value).replace("{" + name + ":path}", value)
    for name in ("suite_id", "run_id", "alert_id"):
        path = path.replace("{" + name + "}", "987654321")
    assert "{" not in path, f"no test value for a parameter of {path}"
    return path


def scoped_key(stack: SecurityStack, team: str, scopes: list[str], **extra: Any) -> str:
    """A key made through the admin API with exactly these scopes."""
    with stack.api("admin") as admin:
        made = admin.post("/api/admin/keys", json={"team": team, "scopes": scopes, **extra})
    assert made.status_code == 201, made.text
    assert made.json()["scopes"] == scopes
    key: str = made.json()["key"]
    return key


def metric(url: str, name: str, label: tuple[str, str] | None = None) -> float:
    """One sample of the gateway's /metrics (0 when it has none yet)."""
    text = httpx.get(f"{url}/metrics", timeout=20).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name != name:
                continue
            if label is None or sample.labels.get(label[0]) == label[1]:
                return sample.value
    return 0.0
