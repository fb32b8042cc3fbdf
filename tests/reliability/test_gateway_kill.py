"""SIGKILL under load: only the last journal tick of records may be lost, Postgres hung or not.

The log sink journals queued records to the spool every `flush_interval_ms` before it writes
them, so what a killed gateway can lose is what arrived since the last tick. A restarted
gateway on the same spool replays the rest. The second test hangs Postgres (SIGSTOP: sockets
open, nothing answers) before the kill, the case where records used to pile up in memory.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.process import SimulatorProcess
from tests.reliability.call_rows import call_rows
from tests.reliability.figures import report
from tests.reliability.gateway_metrics import sink_state
from tests.reliability.postgres_cluster import PostgresCluster, postgres_cluster
from tests.reliability.stack import LIGHT, ZERO_TIME, reliability_config, running_gateway
from tests.reliability.traffic import CallOutcome, TrafficClient, served_rate
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.slow]

RATE = 200.0
FLUSH_MS = 50.0  # the production default
# Scheduling slack on a busy 2-CPU machine: a thread may wake this late after its tick.
SLACK_MS = 150.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster() as running:
        yield running


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": ZERO_TIME}) as running:
        yield running


def _config(simulator: SimulatorProcess) -> dict[str, Any]:
    return reliability_config(simulator.base_url, recording={"flush_interval_ms": FLUSH_MS})


async def _kill_under_load(
    gateway: GatewayProcess, key: str, cluster: PostgresCluster, hang_s: float
) -> tuple[list[CallOutcome], float]:
    """Load for 2 s, hang Postgres for `hang_s` (0: leave it be), SIGKILL the gateway."""
    traffic = TrafficClient(gateway.url, key)
    load = asyncio.create_task(traffic.open_loop(LIGHT, RATE, 2.0 + hang_s + 1.0))
    await asyncio.sleep(2.0)
    frozen = cluster.freeze() if hang_s else []
    try:
        await asyncio.sleep(hang_s)
        killed_at = time.monotonic()
        assert gateway.process is not None
        gateway.process.kill()
    finally:
        cluster.thaw(frozen)
    return await load, killed_at


def _replay(config: dict[str, Any], database: str, spool: Path) -> dict[str, float]:
    """Start a new gateway on the dead one's spool and wait until it replayed every file."""
    with running_gateway(config, database, spool) as restarted:

        def replayed() -> dict[str, float] | None:
            state = sink_state(restarted.url)
            return state if state["pending_files"] == 0 else None

        return wait_for(replayed, timeout=60, what="every spool file replayed", poll=0.2)


def _kill_and_count(
    name: str, cluster: PostgresCluster, simulator: SimulatorProcess, hang_s: float
) -> None:
    database = cluster.create_database(f"plumbline_{name}")
    key = issue_key(database, "team-kill")
    config = _config(simulator)
    with running_gateway(config, database) as gateway:
        outcomes, killed_at = asyncio.run(_kill_under_load(gateway, key, cluster, hang_s))
        spool = gateway.spool_dir
    answered = [o for o in outcomes if o.served and o.call_id]
    ids = [o.call_id for o in answered if o.call_id]
    before_replay = len(call_rows(database, ids))
    replay = _replay(config, database, spool)
    rows = call_rows(database, ids)
    lost = [o for o in answered if o.call_id not in rows]
    lost_ms = [(killed_at - o.finished) * 1000 for o in lost]
    report(
        name,
        calls_sent=len(outcomes),
        answered_before_kill=len(answered),
        served_rps=served_rate(outcomes),
        postgres_hang_s=hang_s,
        recorded_before_restart=before_replay,
        replayed=replay["replayed"],
        records_lost=len(lost),
        oldest_lost_ms_before_kill=max(lost_ms, default=0.0),
    )
    # The guarantee: only calls answered within the last journal tick can be missing. It is a
    # bound in time, not in count: on a busy machine the client reads answers in bunches (51
    # within 22 ms in one CI run at 200 calls/s), so a count derived from the rate is not one.
    assert max(lost_ms, default=0.0) < FLUSH_MS + SLACK_MS, sorted(lost_ms)
    assert len(answered) >= RATE * (2.0 + hang_s) * 0.9


def test_sigkill_loses_at_most_the_last_journal_tick(
    cluster: PostgresCluster, simulator: SimulatorProcess
) -> None:
    _kill_and_count("gateway_sigkill", cluster, simulator, hang_s=0.0)


def test_sigkill_while_postgres_hangs_loses_at_most_the_last_journal_tick(
    cluster: PostgresCluster, simulator: SimulatorProcess
) -> None:
    _kill_and_count("gateway_sigkill_postgres_hung", cluster, simulator, hang_s=3.0)
