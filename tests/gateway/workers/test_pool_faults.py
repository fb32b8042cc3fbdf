"""Pool faults: a killed worker is replaced and its spool replayed; SIGTERM drains every call."""

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
from tests.gateway.workers.pool_stack import (
    children,
    counted_samples,
    pool_metrics,
    running_pool,
    spooled_call_ids,
    spooled_records,
    worker_calls,
    worker_pid,
    workers_scraped,
)
from tests.reliability.call_rows import call_rows, count_calls
from tests.reliability.gateway_metrics import total
from tests.reliability.postgres_cluster import PostgresCluster, postgres_cluster
from tests.reliability.stack import LIGHT, QUESTION, ZERO_TIME, reliability_config
from tests.reliability.traffic import CallOutcome, TrafficClient
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("gateway_pool"), pytest.mark.slow, pytest.mark.timeout(400)]
# 20 ms a token: a 40-token stream runs 0.8 s, long enough to be cut by a careless drain.
DECODING = {
    "prefill_ms_per_token": 0.0,
    "decode_ms_per_token": 20.0,
    "decode_ms_per_extra_seq": 0.0,
    "max_num_seqs": 4096,
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster() as running:
        yield running


def _calls(gateway: GatewayProcess, key: str, count: int) -> list[CallOutcome]:
    return asyncio.run(TrafficClient(gateway.url, key).closed_loop(LIGHT, 8, count))


def _until_worker_served(gateway: GatewayProcess, key: str, worker: str) -> list[CallOutcome]:
    """Rounds of calls until `worker` counted some (its key cache then holds the key)."""
    outcomes: list[CallOutcome] = []
    for _ in range(20):
        outcomes += _calls(gateway, key, 40)
        samples = counted_samples(gateway.url, len(outcomes))
        if worker_calls(samples).get(worker, 0) > 0:
            return outcomes
    raise AssertionError(f"worker {worker} was never given a call")


def _wait_spooled(spools: list[Path], records: int) -> None:
    wait_until(
        lambda: sum(spooled_records(d) for d in spools) == records,
        timeout=60,
        what=f"{records} calls of the outage spooled",
    )


def test_killed_worker_is_replaced_and_its_successor_replays_its_spool(
    cluster: PostgresCluster,
) -> None:
    database = cluster.create_database("plumbline_pool_kill")
    key = issue_key(database, "team-pool-kill")
    with SimulatorProcess({"timing": ZERO_TIME}) as simulator:
        # Cached all along: a scrape reads no stability gauges from the stopped database.
        config = reliability_config(simulator.base_url, stability_metrics_ttl_s=3600.0)
        with running_pool(config, database) as gateway:
            wait_until(lambda: workers_scraped(gateway.url) == 2, timeout=60, what="2 workers")
            before = _until_worker_served(gateway, key, "0")
            before += _until_worker_served(gateway, key, "1")
            wait_until(
                lambda: count_calls(database) == len(before), timeout=60, what="calls written"
            )
            spool_one = gateway.spool_dir / "worker-1"
            spools = [gateway.spool_dir / "worker-0", spool_one]
            cluster.stop("immediate")
            during: list[CallOutcome] = []
            # Calls (keys cached) until worker 1 holds some in its spool, all journaled.
            for _ in range(20):
                during += _calls(gateway, key, 40)
                _wait_spooled(spools, len(during))
                if spooled_records(spool_one) > 0:
                    break
            assert gateway.process is not None
            killed = worker_pid(gateway.process.pid, 1)
            assert killed is not None
            recorders = children(killed)
            os.kill(killed, signal.SIGKILL)
            # Its recorder (a session of its own) spools what it held and exits.
            wait_until(
                lambda: not any(os.path.exists(f"/proc/{pid}") for pid in recorders),
                timeout=60,
                what="the killed worker's recorder exited",
            )
            left_behind = spooled_records(spool_one)
            assert left_behind > 0
            cluster.start()
            wait_until(
                lambda: worker_pid(gateway.process.pid, 1) not in (None, killed),  # type: ignore[union-attr]
                timeout=60,
                what="worker 1 replaced",
            )
            wait_until(lambda: workers_scraped(gateway.url) == 2, timeout=60, what="2 workers")
            served = before + during
            wait_until(
                lambda: count_calls(database) == len(served),
                timeout=90,
                what="every spooled call replayed",
            )
            assert spooled_records(spool_one) == 0
            samples = pool_metrics(gateway.url)
            assert total(samples, "plumbline_spool_pending_files") == 0
    ids = [o.call_id for o in served if o.call_id]
    assert all(o.served for o in served)
    assert len(set(ids)) == len(ids) == len(served)
    assert len(call_rows(database, ids)) == len(ids) == count_calls(database)


def _stream(tokens: int) -> dict[str, Any]:
    return {
        "model": "tiny",
        "messages": QUESTION,
        "max_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
    }


async def _terminate_during_streams(
    gateway: GatewayProcess, simulator: SimulatorProcess, key: str
) -> tuple[list[CallOutcome], int]:
    traffic = TrafficClient(gateway.url, key)
    load = asyncio.create_task(traffic.open_loop(_stream(40), 20.0, 1.5))
    await asyncio.to_thread(
        wait_until,
        lambda: simulator.stats()["in_flight"] >= 10,
        timeout=30,
        what="10 streams running on the backend",
    )
    assert gateway.process is not None
    gateway.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(gateway.process.wait, 120)
    return await load, code


def test_sigterm_drains_every_worker_without_losing_a_stream() -> None:
    with (
        postgres_database("plumbline_pool_sigterm") as database,
        SimulatorProcess({"timing": DECODING}) as simulator,
    ):
        key = issue_key(database, "team-pool-drain")
        with running_pool(reliability_config(simulator.base_url), database) as gateway:
            wait_until(lambda: workers_scraped(gateway.url) == 2, timeout=60, what="2 workers")
            began = time.monotonic()
            outcomes, code = asyncio.run(_terminate_during_streams(gateway, simulator, key))
        assert code == 0
        # The open loop kept sending after the signal: those calls found the port closed.
        answered = [o for o in outcomes if o.status is not None]
        assert len(answered) >= 10
        assert all(o.served for o in answered), [o for o in answered if not o.served][:3]
        assert all(o.started >= began for o in answered)
        ids = [o.call_id for o in answered if o.call_id]
        assert len(set(ids)) == len(ids) == len(answered)
        rows = call_rows(database, ids)
        # Written, or (Postgres slow to answer on a loaded machine) journaled in a worker's
        # spool for the next start to replay: never neither, never both.
        spooled = spooled_call_ids(gateway.spool_dir)
        assert set(rows) | spooled == set(ids), gateway.log_tail()
        assert not set(rows) & spooled
        assert len(rows) == count_calls(database)
        assert {(r.status_code, r.stream) for r in rows.values()} == {(200, True)}
