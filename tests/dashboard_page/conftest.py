"""Fixtures: the data stack (once for the package), one browser per module, a fresh tab per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.dashboard_page.browser import VIEWPORT, DashboardPage, launch
from tests.dashboard_page.stack import DashboardStack, dashboard_stack


@pytest.fixture(scope="package")
def stack() -> Iterator[DashboardStack]:
    """Gateway, simulator, worker and Postgres with two teams' traffic, runs and alerts."""
    with dashboard_stack() as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def dashboard(browser: Browser, stack: DashboardStack) -> Iterator[DashboardPage]:
    """A fresh browser context (empty sessionStorage); fails the test on console errors."""
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    try:
        tab = DashboardPage(context.new_page(), stack.gateway_url)
        yield tab
        assert tab.unexpected_problems() == [], tab.unexpected_problems()
    finally:
        context.close()
