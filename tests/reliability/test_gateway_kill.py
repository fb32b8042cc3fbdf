"""SIGKILL under load: only the last journal tick of records may be lost, Postgres hung or not.

The log sink journals queued records to the spool every `flush_interval_ms` before it writes
them, so what a killed gateway can lose is what it had not journaled yet. A restarted gateway
on the same spool replays the rest. The check is causal, not a window of time: every record
the gateway reported journaled (`plumbline_sink_records_total{outcome="journaled"}`) just
before the kill must be in the database after the replay. The second test hangs Postgres
(SIGSTOP: sockets open, nothing answers) before the kill, the case where records used to pile
up in memory: then nearly every journaled record reaches the database only through the spool.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.process import SimulatorProcess
from tests.reliability.call_rows import call_rows, count_calls
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


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster() as running:
        yield running


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": ZERO_TIME}) as running:
        yield running


def _config(simulator: SimulatorProcess) -> dict[str, Any]:
    # /metrics reads its stability gauges from the database: cached for the whole test, a scrape
    # answers while Postgres hangs.
    return reliability_config(
        simulator.base_url,
        recording={"flush_interval_ms": FLUSH_MS},
        stability_metrics_ttl_s=3600.0,
    )


def _children(pid: int) -> list[int]:
    """The ids of the processes whose parent is `pid` (the gateway's recorder)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone since the listing
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    assert found, f"the gateway {pid} has no recorder process"
    return found


async def _kill_under_load(
    gateway: GatewayProcess, key: str, cluster: PostgresCluster, hang_s: float
) -> tuple[list[CallOutcome], float, dict[str, float]]:
    """Load for 2 s, hang Postgres for `hang_s` (0: leave it be), SIGKILL gateway and recorder.

    Returns the outcomes, the kill's instant and the sink's counters read just before it.
    """
    traffic = TrafficClient(gateway.url, key)
    load = asyncio.create_task(traffic.open_loop(LIGHT, RATE, 2.0 + hang_s + 1.0))
    await asyncio.sleep(2.0)
    await asyncio.to_thread(sink_state, gateway.url)  # fills that cache while Postgres answers
    frozen = cluster.freeze() if hang_s else []
    try:
        await asyncio.sleep(hang_s)
        # Read off the loop, which keeps sending; what it reports journaled only grows after.
        before_kill = await asyncio.to_thread(sink_state, gateway.url)
        killed_at = time.monotonic()
        assert gateway.process is not None
        recorders = _children(gateway.process.pid)
        gateway.process.kill()
        # The recorder runs in a session of its own and would outlive the gateway, draining what
        # it holds: killed too, the journal is all that is left, as when the host loses both.
        for pid in recorders:
            os.kill(pid, signal.SIGKILL)
    finally:
        cluster.thaw(frozen)
    return await load, killed_at, before_kill


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
        outcomes, killed_at, before_kill = asyncio.run(
            _kill_under_load(gateway, key, cluster, hang_s)
        )
        spool = gateway.spool_dir
    answered = [o for o in outcomes if o.served and o.call_id]
    ids = [o.call_id for o in answered if o.call_id]
    before_replay = len(call_rows(database, ids))
    replay = _replay(config, database, spool)
    rows = call_rows(database, ids)
    stored = count_calls(database)
    lost = [o for o in answered if o.call_id not in rows]
    lost_ms = [(killed_at - o.finished) * 1000 for o in lost]
    report(
        name,
        calls_sent=len(outcomes),
        answered_before_kill=len(answered),
        served_rps=served_rate(outcomes),
        postgres_hang_s=hang_s,
        submitted_before_kill=before_kill["submitted"],
        journaled_before_kill=before_kill["journaled"],
        written_before_kill=before_kill["written"],
        recorded_before_restart=before_replay,
        stored_after_replay=stored,
        replayed=replay["replayed"],
        records_lost=len(lost),
        oldest_lost_ms_before_kill=max(lost_ms, default=0.0),
    )
    # The guarantee: what was journaled survives the kill, so only the unjournaled tail (the
    # last tick's records) can be missing. The journal's count is a lower bound of what is on
    # disk (the recorder reports it after each write), so this holds on a machine of any speed.
    assert before_kill["dropped"] == 0
    assert stored >= before_kill["journaled"], (stored, before_kill)
    # The load was real (not a vacuous pass): most of the offered calls were answered. On a
    # CPU-starved machine the open loop falls behind its rate, so this is not a speed check.
    assert len(answered) >= RATE * (2.0 + hang_s) * 0.5


def test_sigkill_loses_at_most_the_last_journal_tick(
    cluster: PostgresCluster, simulator: SimulatorProcess
) -> None:
    _kill_and_count("gateway_sigkill", cluster, simulator, hang_s=0.0)


def test_sigkill_while_postgres_hangs_loses_at_most_the_last_journal_tick(
    cluster: PostgresCluster, simulator: SimulatorProcess
) -> None:
    _kill_and_count("gateway_sigkill_postgres_hung", cluster, simulator, hang_s=3.0)
