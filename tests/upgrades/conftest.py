"""The previous release's tree, extracted once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.upgrades.previous_release import extract


@pytest.fixture(scope="session")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Root of the previous release's packages."""
    return extract(tmp_path_factory.mktemp("previous-release"))
