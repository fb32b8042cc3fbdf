"""Call ids stay unique when a library in the gateway's process seeds Python's `random`.

Libraries call `random.seed(n)` for reproducible sampling; here a `sitecustomize` module does
it in two gateway processes, the way a plugin or an eval helper loaded into them would. Ids
drawn from `random` then repeat across the processes, and call rows collide.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config

pytestmark = pytest.mark.xdist_group("security-call-ids")
CALLS = 5


@pytest.fixture
def seeding_library(tmp_path: Path) -> str:
    """A PYTHONPATH on which every process seeds `random` with the same number at start."""
    (tmp_path / "sitecustomize.py").write_text("import random\n\nrandom.seed(20261201)\n")
    return os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])


def _call_ids(database: str, pythonpath: str) -> list[str]:
    """The ids a fresh gateway gives its first calls (refused ones: no key needed)."""
    config = gateway_config("http://127.0.0.1:9")
    with GatewayProcess(config, database, env={"PYTHONPATH": pythonpath}) as gateway:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
        ids = []
        for _ in range(CALLS):
            response = httpx.post(f"{gateway.url}/v1/chat/completions", json=body, timeout=10)
            assert response.status_code == 401
            ids.append(response.headers["x-plumbline-call-id"])
        return ids


def test_seeding_random_does_not_repeat_call_ids_across_processes(
    seeding_library: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with sqlite_database(tmp_path_factory.mktemp("call-ids")) as database:
        first = _call_ids(database, seeding_library)
        second = _call_ids(database, seeding_library)
    random_parts = {call_id[12:] for call_id in first + second}
    assert len(random_parts) == 2 * CALLS
