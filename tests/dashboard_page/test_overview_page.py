"""Overview in the browser: traffic and latency charts drawn from the API's numbers, usage table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]


def points(tab: DashboardPage, chart: str, series: str) -> list[tuple[str, float, float]]:
    """(time, value, cy) of every marker a chart drew for a series."""
    selector = f'svg[data-chart="{chart}"] g[data-series="{series}"] circle.point'
    return [
        (t, float(v), float(cy))
        for t, v, cy in zip(
            tab.attr_values(selector, "data-t"),
            tab.attr_values(selector, "data-v"),
            tab.attr_values(selector, "cy"),
            strict=True,
        )
    ]


def test_charts_draw_the_teams_traffic_and_latency(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open("overview?range=15m")
    since = (datetime.now(UTC) - timedelta(minutes=30)).isoformat()
    with stack.api("legal") as legal:
        report = legal.get("/api/dashboard/traffic", params={"since": since, "step_s": 10}).json()
    expected = {p["t"]: p for p in report["data"] if p["calls"]}

    calls = points(dashboard, "traffic", "calls")
    assert len(calls) >= 2, "traffic was sent in two 10-second buckets"
    assert {t.replace(".000Z", "Z"): v for t, v, _ in calls} == {
        t: float(p["calls"]) for t, p in expected.items()
    }
    errors = points(dashboard, "traffic", "errors")
    assert sum(v for _, v, _ in errors) == sum(p["errors"] for p in expected.values()) == 3
    # Taller values sit higher: cy falls as the count rises.
    by_value = sorted(calls, key=lambda p: p[1])
    assert [cy for _, _, cy in by_value] == sorted((cy for _, _, cy in by_value), reverse=True)
    top_tick = max(
        float(t)
        for t in dashboard.attr_values('svg[data-chart="traffic"] [data-tick]', "data-tick")
    )
    assert top_tick >= max(v for _, v, _ in calls)

    ttft = {t.replace(".000Z", "Z"): v for t, v, _ in points(dashboard, "ttft", "ttft_p95_ms")}
    assert ttft and ttft == {
        t: pytest.approx(p["ttft_p95_ms"]) for t, p in expected.items() if p["ttft_p95_ms"]
    }
    e2e = points(dashboard, "e2e", "e2e_p50_ms")
    assert len(e2e) == len(expected)
    assert dashboard.page.locator("svg.line-chart path.line").count() == 6
    dashboard.screenshot("overview")


def test_usage_and_latest_calls_tables_show_only_the_team(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open("overview?range=1h")
    with stack.api("legal") as legal:
        since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        usage = legal.get("/api/usage", params={"since": since}).json()["data"]
        latest = legal.get("/api/calls", params={"limit": 20}).json()["data"]
    rows = dashboard.page.locator("#usage-table tbody tr")
    shown = {
        tuple(rows.nth(i).locator("td").nth(column).inner_text() for column in (0, 2, 3))
        for i in range(rows.count())
    }
    assert shown == {(r["feature"], r["endpoint"], f"{r['calls']:,}") for r in usage}
    assert {f for f, _, _ in shown} == {"contracts", "eval:contracts"}
    assert {k for _, k, _ in shown} == {"/v1/chat/completions", "/v1/responses"}
    kinds = dashboard.page.locator("#calls-table tbody tr td:nth-child(5)").all_inner_texts()
    assert kinds == [c["endpoint"] for c in latest]
    hrefs = dashboard.attr_values("#calls-table tbody a", "href")
    assert hrefs == [f"#/calls/{c['id']}" for c in latest]
    assert "per 30 s" in dashboard.page.inner_text("figure.chart-box figcaption >> nth=0")

    dashboard.page.select_option("#range", "15m")
    dashboard.page.wait_for_function(
        "() => document.getElementById('view').dataset.route.includes('range=15m')"
    )
    assert "per 10 s" in dashboard.page.inner_text("figure.chart-box figcaption >> nth=0")


def test_cost_per_call_kind_chart_draws_the_usage_apis_totals(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open("overview?range=1h")
    with stack.api("legal") as legal:
        since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        kinds = legal.get("/api/usage", params={"since": since}).json()["by_endpoint"]
    bars = 'svg[data-chart="cost-by-kind"] rect.bar'
    labels = dashboard.attr_values(bars, "data-label")
    values = [float(v) for v in dashboard.attr_values(bars, "data-value")]
    assert labels == [k["endpoint"] for k in kinds]
    assert labels[0] == "/v1/chat/completions" and "/v1/responses" in labels
    assert values == [pytest.approx(k["cost"]) for k in kinds]
    assert values == sorted(values, reverse=True) and values[-1] > 0
    widths = [float(w) for w in dashboard.attr_values(bars, "width")]
    assert widths == sorted(widths, reverse=True), "a dearer kind draws a longer bar"
