"""The reported per-request metrics follow the configured timing model.

These check the model's arithmetic (prefill per token, decode per step, queueing), not speed:
each bound is one the engine's own rules imply on any machine, however loaded. The engine never
ends a step before its cost is spent, and a step starts where the previous one ended unless the
loop is more than 50 ms late (then afresh, later still), so over a chain of steps only the first
may be up to 50 ms late without the rest making up for it. How close to the model the figures
come on this machine is printed, not asserted.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess

ANSWER = "one two three four five six ten year day"  # 9 tokens, then EOS: 10 in all
TIMING = {"prefill_ms_per_token": 0.5, "decode_ms_per_token": 25.0, "decode_ms_per_extra_seq": 0}
CATCH_UP_MS = 50.0  # simulator.engine.scheduler: how late a step may start and still chain


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


def _steps(sim: SimulatorProcess) -> int:
    return int(sim.stats()["engine"]["steps"])


def test_single_request_follows_prefill_and_decode_costs(
    timed: SimulatorProcess, timed_http: httpx.Client
) -> None:
    steps = _steps(timed)
    metrics, usage = _metrics(timed_http, "words " * 40)
    assert usage["completion_tokens"] == 10
    assert _steps(timed) - steps == 10, "one engine step per token"
    prefill = usage["prompt_tokens"] * TIMING["prefill_ms_per_token"]
    ttft, generation = metrics["time_to_first_token_ms"], metrics["generation_time_ms"]
    # The first step costs the prefill; nine decode steps of 25 ms follow.
    assert ttft >= prefill
    assert generation >= 9 * 25.0 - CATCH_UP_MS
    assert metrics["queue_time_ms"] >= 0
    assert math.isclose(generation, 9 * metrics["mean_itl_ms"], rel_tol=1e-9)
    span_s = (ttft + generation) / 1000
    assert math.isclose(metrics["tokens_per_second"], 10 / span_s, rel_tol=1e-6)
    print(f"TTFT {ttft:.1f} ms (model {prefill:.1f}), ITL {metrics['mean_itl_ms']:.1f} ms (25)")


def _iteration_tokens(sim: SimulatorProcess) -> float:
    """Tokens the engine has charged to its steps so far: prefilled plus decoded."""
    lines = sim.metrics_text().splitlines()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in lines
        if line.startswith("vllm:iteration_tokens_total_sum")
    )


def test_cached_prefix_is_not_prefilled_again(
    timed: SimulatorProcess, timed_http: httpx.Client
) -> None:
    text = "shared context " * 100
    first, usage = _metrics(timed_http, text)
    charged = _iteration_tokens(timed)
    second, again = _metrics(timed_http, text)
    cached = again["prompt_tokens_details"]["cached_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    assert cached >= usage["prompt_tokens"] - 16
    # The engine's own account: the second call's steps prefilled only the uncached tail.
    uncached = again["prompt_tokens"] - cached
    assert _iteration_tokens(timed) - charged == uncached + 10
    assert first["time_to_first_token_ms"] >= usage["prompt_tokens"] * 0.5
    assert second["time_to_first_token_ms"] >= uncached * TIMING["prefill_ms_per_token"]
    ttfts = (first["time_to_first_token_ms"], second["time_to_first_token_ms"])
    print("TTFT uncached {:.1f} ms, cached {:.1f} ms".format(*ttfts))


async def _concurrent(base_url: str, count: int) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60.0) as http:
        responses = await asyncio.gather(
            *(http.post("/v1/chat/completions", json=_ask(f"n{i}")) for i in range(count))
        )
    return [response.json()["metrics"] for response in responses]


def test_decode_slows_as_more_sequences_run(timed: SimulatorProcess) -> None:
    timed.set_timing({**TIMING, "decode_ms_per_extra_seq": 10.0})
    timed.reset()
    with httpx.Client(base_url=timed.base_url, timeout=60.0) as http:
        steps = _steps(timed)
        started = time.monotonic()
        # One request of four sequences: admitted in one step, so four decode in every step.
        # (n > 1 needs sampling; the scenario's one answer has p = 1, so all four are it.)
        four = {**_ask("four"), "n": 4, "temperature": 1.0}
        response = http.post("/v1/chat/completions", json=four)
        elapsed_ms = (time.monotonic() - started) * 1000
    assert [c["finish_reason"] for c in response.json()["choices"]] == ["stop"] * 4
    assert _steps(timed) - steps == 10, "the four sequences shared every step"
    assert timed.stats()["engine"]["max_running_seen"] == 4
    # Nine decode steps of 25 + 3 * 10 ms: alone, nine of 25 ms would take at most 225 ms.
    assert elapsed_ms >= 9 * 55.0 - CATCH_UP_MS
    print(f"four sequences of 10 tokens: {elapsed_ms:.0f} ms (model: prefill + 9 x 55 ms)")


def _queue_seconds(sim: SimulatorProcess) -> float:
    lines = sim.metrics_text().splitlines()
    sums = [line for line in lines if line.startswith("vllm:request_queue_time_seconds_sum")]
    return float(sums[0].rsplit(" ", 1)[1])


@pytest.mark.anyio
async def test_requests_beyond_max_num_seqs_queue(timed: SimulatorProcess) -> None:
    timed.set_timing({**TIMING, "max_num_seqs": 2})
    timed.reset()
    steps, waited = _steps(timed), _queue_seconds(timed)
    queued = sorted(m["queue_time_ms"] for m in await _concurrent(timed.base_url, 4))
    assert timed.stats()["engine"]["max_running_seen"] == 2
    # 40 tokens, two sequences a step at most: the other two waited for a free slot.
    assert _steps(timed) - steps >= 20
    # The queue-time histogram counted exactly these waits.
    assert (_queue_seconds(timed) - waited) * 1000 == pytest.approx(sum(queued), abs=1e-3)
    print(f"queue times (ms): {[round(q) for q in queued]} (model: two near 0, two near 250)")
