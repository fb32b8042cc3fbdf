"""A client that goes away gets its request cancelled at once: slot freed, counted, aborted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.support.waiting import wait_for

LONG_TOKENS = 400
LONG = {
    "messages": [{"role": "user", "content": "Write a long essay."}],
    "max_tokens": LONG_TOKENS,
    "ignore_eos": True,
}


@pytest.fixture(scope="module")
def slow() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": {"decode_ms_per_token": 20.0}}) as sim:
        yield sim


@pytest.fixture
def fresh(slow: SimulatorProcess) -> SimulatorProcess:
    slow.set_timing({"decode_ms_per_token": 20.0})
    slow.reset()
    return slow


def _wait_for(sim: SimulatorProcess, cancelled: int, in_flight: int = 0) -> dict[str, Any]:
    """Stats once `cancelled` requests were cancelled and `in_flight` are still running.

    The cancel is counted inside a request's handler and the request leaves `in_flight` when
    the handler returns, a step later: the stats can be read between the two.
    """

    def stats() -> dict[str, Any] | None:
        now: dict[str, Any] = sim.stats()
        return now if now["cancelled"] >= cancelled and now["in_flight"] == in_flight else None

    what = f"{cancelled} cancelled, {in_flight} in flight"
    return wait_for(stats, timeout=10, what=what, poll=0.02)


def _aborted(sim: SimulatorProcess) -> float:
    for line in sim.metrics_text().splitlines():
        if line.startswith("vllm:request_success_total") and 'finished_reason="abort"' in line:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no abort series")


def _generated(sim: SimulatorProcess) -> float:
    """Tokens the engine has decoded since it started, over every series."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in sim.metrics_text().splitlines()
        if line.startswith(("vllm:generation_tokens_total{", "vllm:generation_tokens_total "))
    )


def test_stream_disconnect_cancels_the_request(fresh: SimulatorProcess) -> None:
    aborted_before = _aborted(fresh)
    generated_before = _generated(fresh)
    with (
        httpx.Client(base_url=fresh.base_url, timeout=30.0) as http,
        http.stream("POST", "/v1/chat/completions", json={**LONG, "stream": True}) as resp,
    ):
        lines = resp.iter_lines()
        for _ in range(3):
            next(line for line in lines if line)
    at_hang_up = _generated(fresh)
    stats = _wait_for(fresh, 1)
    at_cancel = _generated(fresh)
    assert stats["cancelled"] == 1
    assert stats["in_flight"] == 0
    assert stats["engine"]["running"] == 0
    assert stats["completed"] == 0
    assert _aborted(fresh) == aborted_before + 1
    # Cut, not run out: the engine stopped decoding it well before its 400 tokens.
    generated = at_cancel - generated_before
    print(f"disconnect to cancel {stats['cancellations'][0]['disconnect_to_cancel_ms']:.1f} ms")
    print(f"tokens decoded {generated:.0f} of 400, {at_cancel - at_hang_up:.0f} after the hang-up")
    assert generated < LONG_TOKENS
    # At once, counted in engine steps rather than time: the hang-up reaches the simulator's
    # loop before the client's next request does, and the cancel runs in that same loop, so at
    # most a step or two can pass between the two, however slow the machine.
    assert at_cancel - at_hang_up <= 2
    assert fresh.client.get("/load").json() == {"server_load": 0}


def test_nonstreaming_disconnect_cancels_too(fresh: SimulatorProcess) -> None:
    with (
        httpx.Client(base_url=fresh.base_url, timeout=0.3) as http,
        pytest.raises(httpx.ReadTimeout),
    ):
        http.post("/v1/chat/completions", json=LONG)
    stats = _wait_for(fresh, 1)
    assert stats["cancelled"] == 1
    assert stats["engine"]["running"] == 0


def test_cancelled_slot_goes_to_the_next_request(fresh: SimulatorProcess) -> None:
    fresh.set_timing({"decode_ms_per_token": 20.0, "max_num_seqs": 1})
    generated_before = _generated(fresh)
    with httpx.Client(base_url=fresh.base_url, timeout=30.0) as http:
        with http.stream("POST", "/v1/chat/completions", json={**LONG, "stream": True}) as resp:
            lines = resp.iter_lines()  # held: dropping it would close the stream
            next(line for line in lines if line)
        _wait_for(fresh, 1)
        short = {**LONG, "max_tokens": 2}
        metrics = http.post("/v1/chat/completions", json=short).json()["metrics"]
    # Had the cancelled one kept the only slot, the short one would have waited for its 400
    # tokens to be decoded first; served before that, it took the slot the cancel freed.
    generated = _generated(fresh) - generated_before
    print(f"queue time {metrics['queue_time_ms']:.1f} ms, tokens decoded {generated:.0f}")
    assert generated < LONG_TOKENS + 2
    assert fresh.stats()["completed"] == 1


def test_a_queued_request_can_be_cancelled(fresh: SimulatorProcess) -> None:
    fresh.set_timing({"decode_ms_per_token": 20.0, "max_num_seqs": 1})
    with (
        httpx.Client(base_url=fresh.base_url, timeout=30.0) as http,
        http.stream("POST", "/v1/chat/completions", json={**LONG, "stream": True}) as running,
    ):
        lines = running.iter_lines()  # held: dropping it would close the stream
        next(line for line in lines if line)
        with httpx.Client(base_url=fresh.base_url, timeout=0.3) as impatient:
            with pytest.raises(httpx.ReadTimeout):
                impatient.post("/v1/chat/completions", json=LONG)
            stats = _wait_for(fresh, 1, in_flight=1)
            assert stats["engine"]["waiting"] == 0
            assert stats["engine"]["running"] == 1
    assert _wait_for(fresh, 2)["cancelled"] == 2
