"""The reported per-request metrics follow the configured timing model (generous bounds).

These check the model's arithmetic (prefill per token, decode per step, queueing), not speed.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess

ANSWER = "one two three four five six ten year day"  # 9 tokens, then EOS: 10 in all
TIMING = {"prefill_ms_per_token": 0.5, "decode_ms_per_token": 25.0, "decode_ms_per_extra_seq": 0}


@pytest.fixture(scope="module")
def timed() -> Iterator[SimulatorProcess]:
    config = {
        "timing": TIMING,
        "scenarios": [{"match": "probe", "answers": [{"text": ANSWER, "p": 1}]}],
    }
    with SimulatorProcess(config) as sim:
        yield sim


@pytest.fixture
def timed_http(timed: SimulatorProcess) -> Iterator[httpx.Client]:
    timed.set_timing(TIMING)
    timed.reset()
    with httpx.Client(base_url=timed.base_url, timeout=60.0) as http:
        yield http


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"probe {text}"}], "temperature": 0}


def _metrics(http: httpx.Client, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    data = http.post("/v1/chat/completions", json=_ask(text)).json()
    return data["metrics"], data["usage"]


def test_single_request_follows_prefill_and_decode_costs(timed_http: httpx.Client) -> None:
    metrics, usage = _metrics(timed_http, "words " * 40)
    assert usage["completion_tokens"] == 10
    prefill = usage["prompt_tokens"] * TIMING["prefill_ms_per_token"]
    assert prefill * 0.9 <= metrics["time_to_first_token_ms"] <= prefill + 20
    assert 25.0 * 0.95 <= metrics["mean_itl_ms"] <= 25.0 + 15
    assert metrics["queue_time_ms"] < 20
    assert math.isclose(metrics["generation_time_ms"], 9 * metrics["mean_itl_ms"], rel_tol=1e-9)
    span_s = (metrics["time_to_first_token_ms"] + metrics["generation_time_ms"]) / 1000
    assert math.isclose(metrics["tokens_per_second"], 10 / span_s, rel_tol=1e-6)


def test_cached_prefix_is_not_prefilled_again(timed_http: httpx.Client) -> None:
    text = "shared context " * 100
    first, usage = _metrics(timed_http, text)
    second, again = _metrics(timed_http, text)
    cached = again["prompt_tokens_details"]["cached_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    assert cached >= usage["prompt_tokens"] - 16
    uncached_ms = (again["prompt_tokens"] - cached) * TIMING["prefill_ms_per_token"]
    assert second["time_to_first_token_ms"] <= uncached_ms + 20
    assert first["time_to_first_token_ms"] >= usage["prompt_tokens"] * 0.5 * 0.9


async def _concurrent(base_url: str, count: int) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60.0) as http:
        responses = await asyncio.gather(
            *(http.post("/v1/chat/completions", json=_ask(f"n{i}")) for i in range(count))
        )
    return [response.json()["metrics"] for response in responses]


@pytest.mark.anyio
async def test_decode_slows_as_more_sequences_run(timed: SimulatorProcess) -> None:
    timed.set_timing({**TIMING, "decode_ms_per_extra_seq": 10.0})
    alone = (await _concurrent(timed.base_url, 1))[0]["mean_itl_ms"]
    together = [m["mean_itl_ms"] for m in await _concurrent(timed.base_url, 4)]
    assert 25.0 * 0.95 <= alone <= 25.0 + 15
    # Four in the batch: 25 + 3 * 10 ms per step while all four decode.
    assert min(together) >= alone + 15
    assert max(together) <= 55.0 + 25


@pytest.mark.anyio
async def test_requests_beyond_max_num_seqs_queue(timed: SimulatorProcess) -> None:
    timed.set_timing({**TIMING, "max_num_seqs": 2})
    timed.reset()
    queued = sorted(m["queue_time_ms"] for m in await _concurrent(timed.base_url, 4))
    # Two run at once; the other two wait for about 10 steps of 25 ms.
    assert queued[1] < 30
    assert queued[2] > 150
    assert timed.stats()["engine"]["max_running_seen"] == 2
    waited = [
        line
        for line in timed.metrics_text().splitlines()
        if line.startswith("vllm:request_queue_time_seconds_sum")
    ]
    assert float(waited[0].rsplit(" ", 1)[1]) > 0.3
