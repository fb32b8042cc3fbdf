"""The page and its files over HTTP: content types, caching, security headers, no inline code."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.dashboard_page.stack import DashboardStack

pytestmark = pytest.mark.xdist_group("dashboard_page")
SCRIPT_SINKS = (
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "eval(",
    "Function(",
)


def page(stack: DashboardStack, path: str = "/dashboard", **headers: str) -> httpx.Response:
    return httpx.get(f"{stack.gateway_url}{path}", headers=headers, follow_redirects=False)


def asset_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/dashboard/static/[^"]+)"', html)


def test_page_has_strict_security_headers_and_revalidates(stack: DashboardStack) -> None:
    response = page(stack)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    csp = response.headers["content-security-policy"]
    for directive in (
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ):
        assert directive in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-cache"
    again = page(stack, **{"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["content-security-policy"] == csp
    assert page(stack, "/dashboard/").headers["location"] == "/dashboard"


def test_page_has_no_inline_script_or_style_and_no_external_urls(stack: DashboardStack) -> None:
    html = page(stack).text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all(
        'src="/dashboard/static/' in attrs and not body for attrs, body in scripts
    )
    assert " style=" not in html and "<style" not in html
    assert not re.search(r"<[^>]*\son[a-z]+=", html)  # no event-handler attributes
    assert not re.search(r"https?://", html)


def test_static_files_are_immutable_under_their_build_and_typed(stack: DashboardStack) -> None:
    urls = asset_urls(page(stack).text)
    assert any(u.endswith("/app.js") for u in urls) and any(u.endswith("/style.css") for u in urls)
    build = urls[0].split("/")[3]
    app = page(stack, f"/dashboard/static/{build}/app.js")
    assert app.headers["content-type"] == "text/javascript; charset=utf-8"
    assert app.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert app.headers["x-content-type-options"] == "nosniff"
    css = page(stack, f"/dashboard/static/{build}/style.css")
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    stale = page(stack, "/dashboard/static/0000000000000000/app.js")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    assert (
        page(
            stack, f"/dashboard/static/{build}/app.js", **{"If-None-Match": app.headers["etag"]}
        ).status_code
        == 304
    )
    for missing in ("nope.js", "..%2F__init__.py", "index.html", "..%2F..%2Fapp.py", "a/b.js"):
        gone = page(stack, f"/dashboard/static/{build}/{missing}")
        assert gone.status_code == 404, missing
        assert gone.headers["x-content-type-options"] == "nosniff"


def test_scripts_import_only_served_modules_and_use_no_markup_sinks(stack: DashboardStack) -> None:
    build = asset_urls(page(stack).text)[0].split("/")[3]
    seen: set[str] = set()
    todo = ["app.js"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        source = page(stack, f"/dashboard/static/{build}/{name}")
        assert source.status_code == 200, name
        for sink in SCRIPT_SINKS:
            assert sink not in source.text, f"{name} uses {sink}"
        urls = re.findall(r"https?://[^\s\"'`]+", source.text)
        assert set(urls) <= {"http://www.w3.org/2000/svg"}, (name, urls)
        imports = re.findall(r'from "\./([a-z_]+\.js)"', source.text)
        todo.extend(imports)
    assert {"app.js", "api.js", "dom.js", "line_chart.js", "bar_chart.js"} <= seen


def test_dashboard_endpoints_need_a_key_and_refuse_bad_input(stack: DashboardStack) -> None:
    anonymous = httpx.get(f"{stack.gateway_url}/api/dashboard/me")
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == 401
    with stack.api("legal") as legal:
        assert legal.get("/api/dashboard/me").json()["team"] == "legal"
        for params in (
            {"since": "2026-01-01T00:00:00"},
            {"since": "2030-01-01T00:00:00Z", "until": "2029-01-01T00:00:00Z"},
            {"since": "2000-01-01T00:00:00Z", "step_s": "10"},
            {"step_s": "1"},
            {"source": "nonsense"},
            {"since": "yesterday"},
        ):
            bad = legal.get("/api/dashboard/traffic", params=params)
            assert bad.status_code == 400, (params, bad.text)
            assert set(bad.json()["error"]) == {"message", "type", "param", "code"}
        run = f"/api/dashboard/runs/{stack.legal_run}/questions"
        assert legal.get(f"{run}/nope/samples").status_code == 404
        assert legal.get(f"{run}/{'x' * 200}/samples").status_code == 400
        assert legal.get("/api/dashboard/runs/0/questions/cap/samples").status_code == 400


def test_traffic_and_samples_are_scoped_to_the_team(stack: DashboardStack) -> None:
    window = {"since": (datetime.now(UTC) - timedelta(days=2)).isoformat(), "step_s": "86400"}
    totals = {}
    for team in ("legal", "sales", "admin"):
        with stack.api(team) as client:
            report = client.get("/api/dashboard/traffic", params=window).json()
            usage = client.get("/api/usage", params={"since": window["since"]}).json()
        totals[team] = sum(p["calls"] for p in report["data"])
        assert totals[team] == sum(r["calls"] for r in usage["data"]) > 0
        assert sum(p["errors"] for p in report["data"]) == sum(r["errors"] for r in usage["data"])
    assert totals["admin"] == totals["legal"] + totals["sales"]
    path = f"/api/dashboard/runs/{stack.legal_run}/questions/cap/samples"
    with stack.api("legal") as legal:
        samples = legal.get(path).json()
        result = next(
            q
            for q in legal.get(f"/api/evals/runs/{stack.legal_run}").json()["questions"]
            if q["question_key"] == "cap"
        )
    assert len(samples["samples"]) == result["n_samples"] == 24
    assert len(samples["wordings"]) == 3
    with stack.api("sales") as sales:
        hidden = sales.get(path)
        assert (
            hidden.status_code == 404 and "visible to this key" in hidden.json()["error"]["message"]
        )
