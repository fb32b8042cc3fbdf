"""Settings every test directory shares."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (what uvicorn and aiohttp use in production)."""
    return "asyncio"
