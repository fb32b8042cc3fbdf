"""Fixtures: one security stack per module (Postgres), so modules run apart under xdist."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security.stack import SecurityStack, security_stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    """Gateway, simulator and Postgres with admin, alpha (bodies stored) and beta keys."""
    with security_stack("postgres", tmp_path_factory.mktemp("security")) as running:
        yield running
