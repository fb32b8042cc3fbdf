"""The client runs on both event loops the gateway may get: asyncio's own and uvloop."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(
    params=[("asyncio", {}), ("asyncio", {"use_uvloop": True})], ids=["asyncio", "uvloop"]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """uvicorn runs the gateway on uvloop when installed, so both loops are tested."""
    backend: tuple[str, dict[str, Any]] = request.param
    return backend
