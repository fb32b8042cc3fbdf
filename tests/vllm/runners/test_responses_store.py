"""With VLLM_ENABLE_RESPONSES_API_STORE=1: retrieve, cancel, background and previous_response_id
on the real vLLM and on a simulator with `enable_responses_store`, compared."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.vllm.route_differential import compare_all, simulator_like
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]


@pytest.fixture(scope="module")
def store_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    """A real vLLM that keeps its responses."""
    yield from launched_server(request, tmp_path_factory, "--responses-store")


def test_stored_responses_match_the_simulator(store_server: httpx.Client) -> None:
    with simulator_like("store") as simulated:
        found = compare_all("store", store_server, simulated)
    assert not found, "\n".join(found[:30])
