"""The tiny model served as an embedding model (`--runner pooling --convert embed`): embeddings,
pooling, score and rerank, and the 404s for the generate routes, on vLLM and the simulator."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.vllm.route_differential import compare_all, simulator_like
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]


@pytest.fixture(scope="module")
def pooling_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    """A real vLLM running the pooling runner."""
    yield from launched_server(request, tmp_path_factory, "--runner", "pooling")


def test_pooling_routes_match_the_simulator(pooling_server: httpx.Client) -> None:
    with simulator_like("pooling") as simulated:
        found = compare_all("pooling", pooling_server, simulated)
    assert not found, "\n".join(found[:30])
