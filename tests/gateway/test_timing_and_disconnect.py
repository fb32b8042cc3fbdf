"""Metering accuracy against the simulator's known timings, and cancellation on disconnect."""

from __future__ import annotations

import math
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
from tests.support.waiting import wait_until

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


def _stream_and_bracket(
    client: openai.OpenAI, calls: CallReader, simulator: SimulatorProcess, seed: int
) -> tuple[float, float]:
    """One stream whose recorded TTFT and decode span must lie inside what causality allows.

    All times are the one wall clock of this machine. A token chunk reaches the gateway after
    the backend stamped its write and before this client reads it, and the call reaches the
    gateway after this client sent it, so: backend's first write - gateway arrival <= TTFT <=
    client's first token - client's send, and last write - client's first token <= decode span
    <= client's last token - first write. Returns |recorded - backend truth| of TTFT and ITL,
    in ms, as figures only.
    """
    token_times = []
    sent = time.time()
    with client.chat.completions.with_streaming_response.create(
        model="tiny",
        messages=[{"role": "user", "content": "word " * 200}],
        stream=True,
        max_tokens=40,
        seed=seed,
    ) as response:
        call_id = response.headers["x-plumbline-call-id"]
        request_id = response.headers["x-request-id"]
        for chunk in response.parse():
            # The gateway times the same chunks: every choice chunk but the role announcement.
            if chunk.choices and chunk.choices[0].delta.role is None:
                token_times.append(time.time())
    row = calls.wait(call_id)
    writes = simulator.timeline(f"chatcmpl-{request_id}")["token_writes"]
    assert row.ttft_ms is not None and row.itl_mean_ms is not None and row.decode_ms is not None
    assert row.engine_prefill_ms is not None
    # Client-side TTFT can never be shorter than the engine's own prefill.
    assert row.ttft_ms >= row.engine_prefill_ms
    arrival = row.created_at.timestamp()
    true_ttft = (writes[0] - arrival) * 1000
    assert true_ttft <= row.ttft_ms <= (token_times[0] - sent) * 1000
    assert (writes[-1] - token_times[0]) * 1000 <= row.decode_ms
    assert row.decode_ms <= (token_times[-1] - writes[0]) * 1000
    # The mean gap is the span over the gaps between the chunks the client also saw.
    assert math.isclose(row.itl_mean_ms, row.decode_ms / (len(token_times) - 1), rel_tol=1e-6)
    true_itl = (writes[-1] - writes[0]) / (len(writes) - 1) * 1000
    return abs(row.ttft_ms - true_ttft), abs(row.itl_mean_ms - true_itl)


def test_ttft_and_itl_match_the_backends_truth(
    client: openai.OpenAI, calls: CallReader, simulator: SimulatorProcess
) -> None:
    errors = [_stream_and_bracket(client, calls, simulator, seed) for seed in range(12)]
    # How close, not whether: a figure for the log (bench/ measures it under control).
    ttft, itl = (statistics.median(e[i] for e in errors) for i in (0, 1))
    print(f"median |recorded - backend truth|: TTFT {ttft:.2f} ms, ITL {itl:.2f} ms")


def test_client_disconnect_cancels_upstream_and_records_the_tokens_so_far(
    gateway: GatewayProcess, simulator: SimulatorProcess, database: str, calls: CallReader
) -> None:
    key = issue_key(database, "team-hangup")
    before, completed = (simulator.stats()[k] for k in ("cancelled", "completed"))
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
    wait_until(
        lambda: simulator.stats()["cancelled"] > before,
        timeout=15,
        what="the upstream request cancelled",
    )
    stats = simulator.stats()
    assert stats["cancelled"] == before + 1, "the upstream request was cancelled"
    # Cancelled, not finished: the 400-token answer (3.2 s of decode) never completed.
    assert stats["completed"] == completed
    row = calls.wait(call_id)
    assert row.cancelled and row.status_code == 499
    assert row.usage_source == "counted"
    assert row.completion_tokens is not None and 5 <= row.completion_tokens < 400
