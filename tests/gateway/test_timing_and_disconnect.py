"""Metering accuracy against the simulator's known timings, and cancellation on disconnect."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key

pytestmark = pytest.mark.xdist_group("gateway-timing")


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    timing = {"prefill_ms_per_token": 0.5, "decode_ms_per_token": 8.0}
    with SimulatorProcess({"timing": timing}) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    with GatewayProcess(gateway_config(simulator.base_url), database) as process:
        yield process


@pytest.fixture(scope="module")
def client(gateway: GatewayProcess, database: str) -> Iterator[openai.OpenAI]:
    key = issue_key(database, "team-timing")
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _timing_errors(
    client: openai.OpenAI, calls: CallReader, simulator: SimulatorProcess
) -> tuple[float, float]:
    """Median |recorded - truth| of TTFT and ITL over a dozen streams, in ms.

    The truth is when the backend actually wrote the tokens (its wall clock, same machine),
    counted from the call's arrival at the gateway.
    """
    ttft_errors, itl_errors = [], []
    for seed in range(12):
        with client.chat.completions.with_streaming_response.create(
            model="tiny",
            messages=[{"role": "user", "content": "word " * 200}],
            stream=True,
            max_tokens=40,
            seed=seed,
        ) as response:
            call_id = response.headers["x-plumbline-call-id"]
            request_id = response.headers["x-request-id"]
            list(response.parse())
        row = calls.wait(call_id)
        writes = simulator.timeline(f"chatcmpl-{request_id}")["token_writes"]
        assert row.ttft_ms is not None and row.itl_mean_ms is not None
        assert row.engine_prefill_ms is not None
        # Client-side TTFT can never be shorter than the engine's own prefill.
        assert row.ttft_ms >= row.engine_prefill_ms
        true_ttft = (writes[0] - row.created_at.timestamp()) * 1000
        true_itl = (writes[-1] - writes[0]) / (len(writes) - 1) * 1000
        ttft_errors.append(abs(row.ttft_ms - true_ttft))
        itl_errors.append(abs(row.itl_mean_ms - true_itl))
    return statistics.median(ttft_errors), statistics.median(itl_errors)


def test_ttft_and_itl_match_the_backends_truth(
    client: openai.OpenAI, calls: CallReader, simulator: SimulatorProcess
) -> None:
    # The machine is shared with the rest of the suite: a round that a CPU-hungry neighbour
    # disturbed is measured again, up to three times, before the 2 ms bound counts as missed.
    rounds = []
    for _ in range(3):
        rounds.append(_timing_errors(client, calls, simulator))
        if max(rounds[-1]) < 2.0:
            return
    pytest.fail(f"median TTFT / ITL errors over 2 ms in every round (ms): {rounds}")


def test_client_disconnect_cancels_upstream_and_records_the_tokens_so_far(
    gateway: GatewayProcess, simulator: SimulatorProcess, database: str, calls: CallReader
) -> None:
    key = issue_key(database, "team-hangup")
    before = simulator.stats()["cancelled"]
    with httpx.stream(
        "POST",
        f"{gateway.url}/v1/chat/completions",
        json={
            "model": "tiny",
            "messages": [{"role": "user", "content": "go"}],
            "stream": True,
            "max_tokens": 400,
            "ignore_eos": True,
        },
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as response:
        call_id = response.headers["x-plumbline-call-id"]
        seen = 0
        for line in response.iter_lines():
            if line.startswith("data: "):
                seen += 1
            if seen == 6:
                break
    deadline = time.monotonic() + 5
    while simulator.stats()["cancelled"] == before and time.monotonic() < deadline:
        time.sleep(0.02)
    stats = simulator.stats()
    assert stats["cancelled"] == before + 1, "the upstream request was cancelled"
    assert stats["max_disconnect_to_cancel_ms"] < 100
    row = calls.wait(call_id)
    assert row.cancelled and row.status_code == 499
    assert row.usage_source == "counted"
    assert row.completion_tokens is not None and 5 <= row.completion_tokens < 400
