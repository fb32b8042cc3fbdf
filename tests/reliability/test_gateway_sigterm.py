"""SIGTERM under load: calls in flight finish, their records are written, the drain is bounded."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.config import Limits
from simulator.process import SimulatorProcess
from tests.reliability.call_rows import call_rows, count_calls
from tests.reliability.figures import report
from tests.reliability.stack import QUESTION, reliability_config, running_gateway
from tests.reliability.traffic import CallOutcome, TrafficClient
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.slow]
DEFAULT_DRAIN_TIMEOUT_S = Limits().drain_timeout_s

# 20 ms a token, as a real engine decodes: a 40-token answer takes 0.8 s.
TIMING = {
    "prefill_ms_per_token": 0.0,
    "decode_ms_per_token": 20.0,
    "decode_ms_per_extra_seq": 0.0,
    "max_num_seqs": 4096,
}


def _answer(tokens: int, stream: bool) -> dict[str, Any]:
    return {
        "model": "tiny",
        "messages": QUESTION,
        "max_tokens": tokens,
        "ignore_eos": True,
        "stream": stream,
    }


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": TIMING}) as running:
        yield running


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database("plumbline_sigterm") as url:
        yield url


async def _terminate_under_load(
    gateway: GatewayProcess,
    simulator: SimulatorProcess,
    key: str,
    loads: list[tuple[dict[str, Any], float, float]],
    running: int,
) -> tuple[list[CallOutcome], float, float]:
    """Run open loops (payload, rate, seconds), SIGTERM once the backend runs `running` calls.

    Returns the outcomes, when the signal was sent and how long the gateway took to exit.
    """
    traffic = TrafficClient(gateway.url, key)
    tasks = [asyncio.create_task(traffic.open_loop(p, rate, s)) for p, rate, s in loads]
    await asyncio.to_thread(
        wait_until,
        lambda: simulator.stats()["in_flight"] >= running,
        timeout=30,
        what=f"{running} calls running on the backend",
    )
    assert gateway.process is not None
    terminated_at = time.monotonic()
    gateway.process.send_signal(signal.SIGTERM)
    await asyncio.to_thread(gateway.process.wait, 60)
    exit_s = time.monotonic() - terminated_at
    outcomes = [o for found in await asyncio.gather(*tasks) for o in found]
    return outcomes, terminated_at, exit_s


def test_sigterm_lets_calls_in_flight_finish_and_writes_their_records(
    simulator: SimulatorProcess, database: str
) -> None:
    key = issue_key(database, "team-sigterm")
    before = count_calls(database)
    loads = [(_answer(40, True), 60.0, 3.0), (_answer(40, False), 40.0, 3.0)]
    with running_gateway(reliability_config(simulator.base_url), database) as gateway:
        outcomes, terminated_at, exit_s = asyncio.run(
            _terminate_under_load(gateway, simulator, key, loads, running=70)
        )
    accepted = [o for o in outcomes if o.status is not None]
    in_flight = [o for o in accepted if o.started < terminated_at < o.finished]
    cut = [o for o in accepted if not o.served]
    refused = [o for o in outcomes if o.status is None]
    ids = [o.call_id for o in accepted if o.call_id]
    rows = call_rows(database, ids)
    report(
        "gateway_sigterm",
        calls_sent=len(outcomes),
        accepted=len(accepted),
        in_flight_at_sigterm=len(in_flight),
        finished=len(accepted) - len(cut),
        cut=len(cut),
        refused_after_sigterm=len(refused),
        records_written=len(rows),
        records_lost=len(ids) - len(rows),
        exit_s=exit_s,
    )
    assert len(in_flight) >= 50, "the signal came while calls were running"
    assert not cut, f"calls cut short: {cut[:3]}"
    assert len(ids) == len(accepted) and len(rows) == len(ids)
    # Nothing was recorded that no client saw, and nothing refused had started.
    assert count_calls(database) - before == len(ids)
    # Refused only once the signal was sent: the gateway took every call until then.
    assert all(o.call_id is None and o.finished >= terminated_at for o in refused)
    # The drain ended because the calls did, not at the (default 30 s) drain timeout.
    assert exit_s < DEFAULT_DRAIN_TIMEOUT_S


def test_sigterm_cuts_calls_still_running_at_the_drain_timeout(
    simulator: SimulatorProcess, database: str
) -> None:
    key = issue_key(database, "team-drain")
    config = reliability_config(simulator.base_url, limits={"drain_timeout_s": 2})
    long_answers = [(_answer(500, True), 20.0, 1.0)]  # 10 s each
    with running_gateway(config, database) as gateway:
        outcomes, _, exit_s = asyncio.run(
            _terminate_under_load(gateway, simulator, key, long_answers, running=20)
        )
    rows = call_rows(database, [o.call_id for o in outcomes if o.call_id])
    report(
        "gateway_sigterm_drain_bound",
        calls_sent=len(outcomes),
        drain_timeout_s=2,
        exit_s=exit_s,
        ended_with_error_event=sum(1 for o in outcomes if o.complete and o.error_code == 503),
        records_503=sum(1 for r in rows.values() if r.status_code == 503),
    )
    # The drain waited its 2 s; that it then cut the 10 s answers shows in their 503 events.
    assert exit_s >= 2.0
    # Each cut stream ends in an OpenAI-shaped error event and [DONE], and is recorded so.
    assert all(o.status == 200 and o.complete and o.error_code == 503 for o in outcomes)
    assert all(o.error_shape_ok for o in outcomes)
    assert len(rows) == len(outcomes) == 20
    assert {(r.status_code, r.cancelled) for r in rows.values()} == {(503, False)}
