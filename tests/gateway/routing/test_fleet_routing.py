"""Prefix affinity through the real gateway over loopback, in front of three simulators."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from bench.routing.counters import sample_sum
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.waiting import wait_until

DOCUMENT = " ".join(f"clause {i} of the master agreement says nothing new." for i in range(40))


@pytest.fixture(scope="module")
def fleet() -> Iterator[list[SimulatorProcess]]:
    timing = {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 2.0}
    with ExitStack() as stack:
        yield [
            stack.enter_context(SimulatorProcess({"timing": timing, "max_model_len": 8192}))
            for _ in range(3)
        ]


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def gateway(fleet: list[SimulatorProcess], database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(fleet[0].base_url)
    config["models"][0]["backends"] = [{"url": sim.base_url} for sim in fleet]
    config["models"][0]["routing"] = "prefix_affinity"
    config["models"][0]["prefix_affinity"] = {"block_chars": 256, "load_margin": 1}
    with GatewayProcess(config, database) as process:
        yield process


@pytest.fixture(scope="module")
def http(gateway: GatewayProcess, database: str) -> Iterator[httpx.Client]:
    key = issue_key(database, "team-routing")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=gateway.url, headers=headers, timeout=30) as client:
        yield client


def _served(fleet: list[SimulatorProcess]) -> list[float]:
    return [sample_sum(sim.metrics_text(), "vllm:request_success_total") for sim in fleet]


def _chat(document: str, question: str, **extra: Any) -> dict[str, Any]:
    messages = [
        {"role": "system", "content": document},
        {"role": "user", "content": question},
    ]
    return {"model": "tiny", "messages": messages, "max_tokens": 4, **extra}


def _home(http: httpx.Client, fleet: list[SimulatorProcess], body: dict[str, Any]) -> int:
    """Which simulator served one call."""
    before = _served(fleet)
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    grew = [i for i, (a, b) in enumerate(zip(before, _served(fleet), strict=True)) if b > a]
    assert len(grew) == 1
    return grew[0]


def test_calls_sharing_a_document_go_where_it_is_cached(
    http: httpx.Client, fleet: list[SimulatorProcess]
) -> None:
    homes = set()
    for number in range(8):
        document = f"{uuid.uuid4().hex} {DOCUMENT}"
        first = _home(http, fleet, _chat(document, "What is clause 1?"))
        hits = sample_sum(fleet[first].metrics_text(), "vllm:prefix_cache_hits_total")
        for question in ("clause 2?", "clause 3?", f"clause {number}?"):
            assert _home(http, fleet, _chat(document, question)) == first
        assert sample_sum(fleet[first].metrics_text(), "vllm:prefix_cache_hits_total") > hits
        homes.add(first)
    assert len(homes) > 1
    page = http.get("/metrics").text
    assert sample_sum(page, "plumbline_routing_decisions_total", 'reason="affinity"') >= 32


def test_a_busy_backend_loses_the_call_to_the_least_loaded(
    http: httpx.Client, fleet: list[SimulatorProcess]
) -> None:
    document = f"{uuid.uuid4().hex} {DOCUMENT}"
    home = _home(http, fleet, _chat(document, "warm"))
    # Two long streams held open on the home backend: its load is now 2, the others' 0.
    long = _chat(document, "talk", stream=True, max_tokens=4000, ignore_eos=True)
    with ExitStack() as streams:
        # The line iterators are kept: one dropped closes its stream.
        lines = []
        for _ in range(2):
            response = streams.enter_context(http.stream("POST", "/v1/chat/completions", json=long))
            assert response.status_code == 200
            lines.append(response.iter_lines())
            next(lines[-1])
        wait_until(
            lambda: sample_sum(fleet[home].metrics_text(), "vllm:num_requests_running") == 2,
            timeout=10,
            what="both streams to run on the home backend",
        )
        assert _home(http, fleet, _chat(document, "now")) != home
    page = http.get("/metrics").text
    assert sample_sum(page, "plumbline_routing_decisions_total", 'reason="load_fallback"') >= 1
    # Once the streams are gone (as the gateway sees it) the document's calls go home again.
    url = fleet[home].base_url

    def idle() -> bool:
        page = http.get("/metrics").text
        busy = sample_sum(page, "plumbline_backend_in_flight", f'backend="{url}"')
        return busy + sample_sum(page, "plumbline_backend_engine", f'backend="{url}"') == 0

    wait_until(idle, timeout=10, what="the cut streams to end")
    assert _home(http, fleet, _chat(document, "back")) == home


def test_a_huge_prompt_is_routed_within_the_bound_and_answered(http: httpx.Client) -> None:
    body = _chat("h " * 500_000, "?")
    response = http.post("/v1/chat/completions", json=body)
    # The backend refuses the length (a 400, as vLLM's); the gateway never fails on it.
    assert response.status_code == 400, response.text


def test_a_backend_going_down_moves_only_its_share(
    http: httpx.Client, fleet: list[SimulatorProcess], gateway: GatewayProcess
) -> None:
    documents = [f"{uuid.uuid4().hex} {DOCUMENT}" for _ in range(24)]
    before = [_home(http, fleet, _chat(d, "first")) for d in documents]
    assert 2 in before
    fleet[2].stop()
    wait_until(
        lambda: (
            sample_sum(
                http.get("/metrics").text, "plumbline_backend_up", f'backend="{fleet[2].base_url}"'
            )
            == 0
        ),
        timeout=10,
        what="the gateway to take the stopped backend out",
    )
    after = [_home(http, fleet[:2], _chat(d, "second")) for d in documents]
    for was, now in zip(before, after, strict=True):
        if was != 2:
            assert now == was
