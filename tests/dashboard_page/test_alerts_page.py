"""Alerts in the browser: the firing alert with its rule and runs, acknowledged from the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]


def test_a_firing_alert_is_listed_and_acknowledged(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    alert_id = stack.legal_alerts[0]
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open("alerts?status=all")
    row = dashboard.page.locator("#alerts-table tbody tr").filter(has_text="question:cap")
    assert row.locator("span.state").inner_text() == "firing"
    assert "legal / contracts" in row.inner_text()
    assert row.locator("a").first.get_attribute("href") == f"#/evals/runs/{stack.legal_run}"
    dashboard.screenshot("alerts-firing")

    row.locator(f"button.ack[data-alert='{alert_id}']").click()
    expect(row.locator("span.state")).to_have_text("acknowledged")
    with stack.api("legal") as legal:
        stored = legal.get(f"/api/alerts/{alert_id}").json()
    assert stored["status"] == "acknowledged"
    assert stored["acknowledged_by"].startswith("legal key ")
    assert stored["events"][-1]["kind"] == "acknowledged"
    assert row.locator("button.ack").count() == 0
    dashboard.screenshot("alerts-acknowledged")

    dashboard.open("alerts?status=firing")
    assert "No firing alerts visible to this key." in dashboard.page.inner_text("main#view")
