"""Fixtures for the dashboard tests: one populated stack per xdist worker that needs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dashboards.stack import DashboardStack, dashboard_stack


@pytest.fixture(scope="session")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardStack]:
    """Gateway, simulators, traffic and two eval runs on a database Grafana's role can read."""
    with dashboard_stack(tmp_path_factory.mktemp("dashboards")) as stack:
        yield stack
