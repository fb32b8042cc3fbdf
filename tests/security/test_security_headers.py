"""Security headers: the dashboard page and files, and every /api/ answer (errors too)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.security.stack import SecurityStack, security_stack

pytestmark = pytest.mark.xdist_group("security-headers")
PAGE_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
CSP_DIRECTIVES = (
    "default-src 'none'",
    "script-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "require-trusted-types-for 'script'",
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("sqlite", tmp_path_factory.mktemp("headers")) as running:
        yield running


def _page_paths(stack: SecurityStack) -> list[str]:
    html = httpx.get(f"{stack.url}/dashboard").text
    assets = re.findall(r'(?:src|href)="(/dashboard/static/[^"]+)"', html)
    assert assets
    return ["/dashboard", *assets, "/dashboard/no-such-page", "/dashboard/static/x/nothing.js"]


def test_every_dashboard_response_has_the_security_headers(stack: SecurityStack) -> None:
    for path in _page_paths(stack):
        response = httpx.get(f"{stack.url}{path}")
        for name, value in PAGE_HEADERS.items():
            assert response.headers.get(name) == value, (path, name)
        csp = response.headers["content-security-policy"]
        assert all(d in csp for d in CSP_DIRECTIVES), (path, csp)
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "*" not in csp
        assert "camera=()" in response.headers["permissions-policy"]


@pytest.mark.parametrize(
    ("path", "who"),
    [
        ("/api/calls", "alpha"),
        ("/api/calls/nope", "alpha"),
        ("/api/calls", None),
        ("/api/dashboard/me", "alpha"),
        ("/api/admin/keys", "alpha"),
        ("/api/usage?since=yesterday", "alpha"),
    ],
)
def test_api_answers_are_not_cached_sniffed_or_shared_cross_origin(
    stack: SecurityStack, path: str, who: str | None
) -> None:
    with stack.api(who) as client:
        response = client.get(path, headers={"Origin": "https://evil.example"})
        preflight = client.options(
            path,
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
        )
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-type"].startswith("application/json")
    for answer in (response, preflight):
        assert "access-control-allow-origin" not in answer.headers
        assert "access-control-allow-credentials" not in answer.headers
