"""The overview's budgets panel: sales sees its spend against its limit; legal sees none of it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack
from tests.dashboard_page.traffic import LAW_QUESTION, send_traffic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]
# One call spends about 4e-05: a few percent of these, so the bars are visibly drawn.
MONTH, DAY = 0.001, 0.0005


@pytest.fixture(scope="module")
def sales_budget(stack: DashboardStack) -> Iterator[float]:
    """A month and a day budget on sales, one call spent against it; cleared after."""
    with stack.api("admin") as admin:
        changed = admin.patch(
            "/api/admin/teams/sales",
            json={"budget_month": MONTH, "budget_day": DAY, "budget_soft_fraction": 0.8},
        )
        assert changed.status_code == 200, changed.text
        try:
            send_traffic(stack.gateway_url, stack.keys["sales"], "search", LAW_QUESTION, 1)
            with stack.api("sales") as sales:
                spent = wait_for(
                    lambda: _spent(sales),
                    timeout=30,
                    what="sales' call to be settled against its budget",
                )
            yield spent
        finally:
            cleared = admin.patch(
                "/api/admin/teams/sales", json={"budget_month": None, "budget_day": None}
            )
            assert cleared.status_code == 200, cleared.text


def _spent(client: httpx.Client) -> float | None:
    rows = client.get("/api/dashboard/budgets").json()["budgets"]
    spent = [r["spent"] for r in rows if r["scope"] == "team" and r["period"] == "month"]
    return spent[0] if spent and spent[0] else None


def test_sales_sees_its_spend_against_its_budgets(
    dashboard: DashboardPage, stack: DashboardStack, sales_budget: float
) -> None:
    dashboard.sign_in(stack.keys["sales"])
    dashboard.open("overview?range=15m")
    rows = dashboard.page.locator("svg.budget-chart g.budget-row")
    assert rows.count() == 2
    keys = dashboard.attr_values("svg.budget-chart g.budget-row", "data-key")
    assert keys == ["team:sales:day", "team:sales:month"]
    month = dashboard.page.locator('g.budget-row[data-key="team:sales:month"]')
    assert float(month.get_attribute("data-limit") or 0) == MONTH
    assert float(month.get_attribute("data-soft") or 0) == pytest.approx(MONTH * 0.8)
    assert float(month.get_attribute("data-spent") or 0) >= sales_budget > 0
    track = float(month.locator("rect.track").get_attribute("width") or 0)
    bar = float(month.locator("rect.bar").get_attribute("width") or 0)
    assert bar / track == pytest.approx(sales_budget / MONTH, abs=0.01) and bar > 0
    start = float(month.locator("rect.track").get_attribute("x") or 0)
    soft = float(month.locator("line.soft-mark").get_attribute("x1") or 0)
    assert (soft - start) / track == pytest.approx(0.8)
    assert "of $0.001000" in (month.locator("text.bar-value").text_content() or "")
    table = dashboard.page.inner_text("#budgets-table")
    assert "team sales" in table and "month" in table and "resets" in table
    dashboard.screenshot("budgets-sales-overview")


def test_a_read_key_of_legal_sees_no_budget_of_sales(
    dashboard: DashboardPage, stack: DashboardStack, sales_budget: float
) -> None:
    with stack.api("admin") as admin:
        issued = admin.post("/api/admin/keys", json={"team": "legal", "scopes": ["read"]})
    assert issued.status_code == 201, issued.text
    reader = issued.json()["key"]
    dashboard.sign_in(reader)
    dashboard.open("overview?range=15m")
    assert dashboard.page.locator("svg.budget-chart").count() == 0
    empty = dashboard.page.inner_text("#budgets-empty")
    assert "team legal" in empty and "plumbline teams set legal --budget-month" in empty
    panels = dashboard.page.inner_text("main#view")
    assert "team:sales" not in panels and "team sales" not in panels
    with httpx.Client(base_url=stack.gateway_url, timeout=30) as client:
        headers = {"Authorization": f"Bearer {reader}"}
        other = client.get("/api/dashboard/budgets", params={"team": "sales"}, headers=headers)
    assert other.status_code == 403 and "admin" in other.json()["error"]["message"]
