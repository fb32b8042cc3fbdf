"""The routes beyond chat on the default (generate) vLLM and on the simulator: the same answers.

Covers the Responses API without a store, the Anthropic Messages API, and the 404s a generate
server gives the pooling and audio routes. The store and pooling servers are in runners/.
"""

from __future__ import annotations

import httpx
import pytest

from tests.vllm.route_differential import compare_all, simulator_like

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]


def test_generate_server_routes_match_the_simulator(http: httpx.Client) -> None:
    with simulator_like("generate") as simulated:
        found = compare_all("generate", http, simulated)
    assert not found, "\n".join(found[:30])
