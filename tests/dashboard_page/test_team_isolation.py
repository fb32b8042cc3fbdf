"""Team isolation in the browser: sales' key never shows legal's calls, runs or alerts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]


def test_sales_sees_its_own_data_and_none_of_legals(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["sales"])
    assert "team sales" in dashboard.page.inner_text("#who")
    dashboard.open("overview?range=15m")
    html = dashboard.page.content()
    assert all(call_id not in html for call_id in stack.legal_calls)
    assert any(call_id in html for call_id in stack.sales_calls)
    features = set(dashboard.texts("#usage-table tbody td:first-child"))
    assert features == {"search", "eval:pricing"}
    assert "contracts" not in dashboard.page.inner_text("main#view")
    with stack.api("sales") as sales:
        since = (datetime.now(UTC) - timedelta(days=2)).isoformat()
        report = sales.get("/api/dashboard/traffic", params={"since": since, "step_s": 86400})
    drawn = [float(v) for v in dashboard.attr_values('g[data-series="calls"] circle', "data-v")]
    assert sum(drawn) == sum(p["calls"] for p in report.json()["data"])
    dashboard.screenshot("isolation-sales-overview")

    dashboard.open("evals")
    assert dashboard.attr_values("#runs-table tbody tr td:first-child a", "href") == [
        f"#/evals/runs/{stack.sales_run}"
    ]
    dashboard.open("alerts?status=all")
    assert "No alerts visible to this key." in dashboard.page.inner_text("main#view")


@pytest.mark.parametrize(
    "route",
    ["calls/{call}", "evals/runs/{run}", "evals/runs/{run}/questions/cap"],
)
def test_legals_things_are_not_found_with_a_sales_key(
    dashboard: DashboardPage, stack: DashboardStack, route: str
) -> None:
    dashboard.expected.append(r"Failed to load resource: the server responded with a status of 404")
    dashboard.sign_in(stack.keys["sales"])
    dashboard.open(route.format(call=stack.legal_calls[0], run=stack.legal_run), state="error")
    message = dashboard.page.inner_text("#view-error")
    assert "visible to this key" in message
    assert "indemnity" not in dashboard.page.inner_text("main#view")


def test_admin_sees_both_teams(dashboard: DashboardPage, stack: DashboardStack) -> None:
    dashboard.sign_in(stack.keys["admin"])
    assert "admin" in dashboard.page.inner_text("#who")
    dashboard.open("evals")
    hrefs = dashboard.attr_values("#runs-table tbody tr td:first-child a", "href")
    assert set(hrefs) == {f"#/evals/runs/{stack.legal_run}", f"#/evals/runs/{stack.sales_run}"}
    dashboard.open("overview?range=15m")
    features = set(dashboard.texts("#usage-table tbody td:first-child"))
    assert {"search", "contracts"} <= features


def test_the_key_lives_in_session_storage_and_a_bad_key_is_refused(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.expected.append(r"Failed to load resource: the server responded with a status of 401")
    dashboard.page.goto(f"{stack.gateway_url}/dashboard")
    dashboard.page.fill("#api-key", "pl-0000000000.not-a-key")
    dashboard.page.click("#login-form button[type=submit]")
    dashboard.page.wait_for_function("() => document.getElementById('login-error').textContent")
    assert "not accepted" in dashboard.page.inner_text("#login-error")
    assert dashboard.session_storage() == {}
    assert dashboard.page.locator("main#view > *").count() == 0

    dashboard.sign_in(stack.keys["sales"])
    assert dashboard.session_storage() == {"plumbline.apiKey": stack.keys["sales"]}
    dashboard.page.reload()
    dashboard.page.wait_for_selector("main#view[data-state=ready]")
    assert "team sales" in dashboard.page.inner_text("#who")
    dashboard.page.click("#logout")
    assert dashboard.session_storage() == {}
    assert dashboard.page.is_visible("#login")
