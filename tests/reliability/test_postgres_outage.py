"""Postgres stopped for 60 s under 200 calls a second: every call served, no record lost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from simulator.process import SimulatorProcess
from tests.reliability.call_rows import call_rows, count_calls
from tests.reliability.figures import report
from tests.reliability.gateway_metrics import sink_state
from tests.reliability.postgres_cluster import PostgresCluster, postgres_cluster
from tests.reliability.stack import LIGHT, ZERO_TIME, reliability_config, running_gateway
from tests.reliability.traffic import CallOutcome, TrafficClient, achieved_rate, served_rate
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.slow, pytest.mark.timeout(420)]

RATE = 200.0
BEFORE_S, OUTAGE_S, AFTER_S = 5.0, 60.0, 10.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster() as running:
        yield running


async def _load_through_outage(
    traffic: TrafficClient, cluster: PostgresCluster, gateway_url: str
) -> tuple[list[CallOutcome], dict[str, float], float]:
    """Open-loop load; Postgres crashes after BEFORE_S and returns OUTAGE_S later."""
    load = asyncio.create_task(traffic.open_loop(LIGHT, RATE, BEFORE_S + OUTAGE_S + AFTER_S))
    await asyncio.sleep(BEFORE_S)
    down_at = time.monotonic()
    await asyncio.to_thread(cluster.stop, "immediate")
    await asyncio.sleep(OUTAGE_S / 2)
    during = await asyncio.to_thread(sink_state, gateway_url)
    await asyncio.sleep(down_at + OUTAGE_S - time.monotonic())
    await asyncio.to_thread(cluster.start)
    return await load, during, down_at


def _wait_for_replay(gateway_url: str, timeout: float = 120.0) -> dict[str, float]:
    state = sink_state(gateway_url)

    def replayed() -> bool:
        nonlocal state
        state = sink_state(gateway_url)
        accounted = state["written"] + state["spooled"] + state["dropped"]
        settled = state["pending_files"] == 0 and state["submitted"] == accounted
        return settled and state["replayed"] >= state["spooled"] and state["database_up"] == 1

    try:
        wait_until(replayed, timeout=timeout, what="the spool replayed")
    except AssertionError as error:
        raise AssertionError(f"{error}: {state}") from None
    return state


def _latency_ms(outcomes: list[CallOutcome], start: float, end: float) -> dict[str, float]:
    times = sorted(o.seconds * 1000 for o in outcomes if start <= o.started < end)
    if not times:
        return {}
    return {"p50": times[len(times) // 2], "p99": times[int(len(times) * 0.99)]}


def _run(
    gateway: GatewayProcess, cluster: PostgresCluster, key: str
) -> tuple[list[CallOutcome], list[CallOutcome], dict[str, float], float, dict[str, float]]:
    traffic = TrafficClient(gateway.url, key)
    # One call first: the key cache then serves this key while the database is away.
    warm = asyncio.run(traffic.closed_loop(LIGHT, 1, 1))
    assert warm[0].served
    outcomes, during, down_at = asyncio.run(_load_through_outage(traffic, cluster, gateway.url))
    return outcomes, warm, during, down_at, _wait_for_replay(gateway.url)


def test_postgres_down_for_a_minute_loses_no_call(cluster: PostgresCluster) -> None:
    database = cluster.create_database("plumbline_outage")
    key = issue_key(database, "team-outage")
    with (
        SimulatorProcess({"timing": ZERO_TIME}) as simulator,
        running_gateway(reliability_config(simulator.base_url), database) as gateway,
    ):
        outcomes, warm, during, down_at, after = _run(gateway, cluster, key)

    sent = len(outcomes)
    not_served = [o for o in outcomes if not o.served]
    seen_ids = [o.call_id for o in [*warm, *outcomes] if o.call_id]
    rows = call_rows(database, seen_ids)
    lost = len(seen_ids) - len(rows)
    figures: dict[str, Any] = {
        "calls_sent": sent,
        "served": sent - len(not_served),
        "offered_rps": RATE,
        "started_rps": achieved_rate(outcomes),
        "served_rps": served_rate(outcomes),
        "records_lost": lost,
        "rows": count_calls(database),
        "spooled": after["spooled"],
        "replayed": after["replayed"],
        "dropped": after["dropped"],
        "spooled_mid_outage": during["spooled"],
        "latency_before_ms": _latency_ms(outcomes, 0, down_at),
        "latency_during_ms": _latency_ms(outcomes, down_at, down_at + OUTAGE_S),
    }
    report("postgres_outage", **figures)
    assert not not_served, f"{len(not_served)} calls not served, e.g. {not_served[:3]}"
    missing = [o.finished - down_at for o in outcomes if o.call_id and o.call_id not in rows]
    assert lost == 0, f"answered, not recorded (s after the crash): {missing[:20]}"
    assert len(seen_ids) == sent + 1
    assert figures["rows"] == sent + 1, "no duplicate and no stray row"
    # The outage was visible while it lasted, and the spool took and gave back the records.
    assert during["database_up"] == 0 and during["spooled"] > 0
    assert after["database_up"] == 1 and after["dropped"] == 0
    # Every call answered well inside the outage had its record held in the spool.
    inside = sum(1 for o in outcomes if down_at + 1 < o.finished < down_at + OUTAGE_S - 1)
    assert after["replayed"] == after["spooled"] >= inside > 0
    assert after["submitted"] == after["written"] + after["spooled"] == sent + 1
