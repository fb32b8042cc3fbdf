"""`plumbline gateway --workers 2`: calls land on both workers, each recorded once, one /metrics."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from plumbline.child_process import plumbline_command
from simulator.process import SimulatorProcess
from tests.gateway.workers.pool_stack import (
    answering_worker,
    counted_samples,
    pool_config,
    pool_metrics,
    running_pool,
    worker_calls,
    workers_scraped,
)
from tests.reliability.call_rows import call_rows, count_calls
from tests.reliability.gateway_metrics import total
from tests.reliability.stack import LIGHT, ZERO_TIME, reliability_config
from tests.reliability.traffic import CallOutcome, TrafficClient
from tests.support.databases import postgres_database
from tests.support.gateway_process import issue_key
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("gateway_pool"), pytest.mark.slow]


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": ZERO_TIME}) as running:
        yield running


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database("plumbline_pool") as url:
        yield url


def _until_both_served(url: str, key: str) -> list[CallOutcome]:
    """Rounds of 40 concurrent calls until each worker counted some (at most 20 rounds)."""
    outcomes: list[CallOutcome] = []
    traffic = TrafficClient(url, key)
    for _ in range(20):
        outcomes += asyncio.run(traffic.closed_loop(LIGHT, 8, 40))
        samples = counted_samples(url, len([o for o in outcomes if o.served]))
        if all(worker_calls(samples).get(w, 0) > 0 for w in ("0", "1")):
            return outcomes
    raise AssertionError(f"the port gave every call to one worker: {worker_calls(samples)}")


def test_two_workers_share_the_port_record_each_call_once_and_count_it_in_one_metrics(
    simulator: SimulatorProcess, database: str
) -> None:
    key = issue_key(database, "team-pool")
    with running_pool(reliability_config(simulator.base_url), database) as gateway:
        wait_until(lambda: workers_scraped(gateway.url) == 2, timeout=60, what="both workers")
        outcomes = _until_both_served(gateway.url, key)
        served = [o for o in outcomes if o.served]
        assert len(served) == len(outcomes)
        ids = [o.call_id for o in served if o.call_id]
        assert len(set(ids)) == len(ids) == len(served)
        wait_until(
            lambda: count_calls(database) >= len(ids), timeout=60, what="every call recorded"
        )
        seen: set[str] = set()

        def scrape_both() -> bool:
            samples = pool_metrics(gateway.url)
            seen.add(answering_worker(samples))
            # Whichever worker answers: every call counted once, the pool's gauges not doubled.
            assert total(samples, "plumbline_calls_total") == len(served)
            assert sum(worker_calls(samples).values()) == len(served)
            assert total(samples, "plumbline_gateway_workers", state="scraped") == 2
            assert total(samples, "plumbline_gateway_workers", state="unreachable") == 0
            assert total(samples, "plumbline_backend_up", model="tiny") == 1
            assert total(samples, "plumbline_sink_database_up") == 1
            assert total(samples, "plumbline_sink_records_total", outcome="written") == len(served)
            assert total(samples, "plumbline_e2e_seconds_count") == len(served)
            return seen == {"0", "1"}

        wait_until(scrape_both, timeout=60, what="a scrape answered by each worker")
    rows = call_rows(database, ids)
    assert len(rows) == len(ids) == count_calls(database)
    assert {r.status_code for r in rows.values()} == {200}


def _refusal(config: dict[str, Any], database: str, tmp_path: Path) -> str:
    """What `plumbline gateway --workers 2` says on stderr as it refuses `config`."""
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    finished = subprocess.run(
        plumbline_command("gateway", "--config", str(path), "--workers", "2", "--port", "1"),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PLUMBLINE_DATABASE__URL": database},
    )
    assert finished.returncode == 1
    return finished.stderr


def test_several_workers_with_rate_limits_in_memory_refuse_to_start(
    simulator: SimulatorProcess, database: str, tmp_path: Path
) -> None:
    stderr = _refusal(reliability_config(simulator.base_url), database, tmp_path)
    assert "limits.rate_limits.store: redis" in stderr


def test_several_workers_without_the_invalidation_channel_refuse_to_start(
    simulator: SimulatorProcess, database: str, tmp_path: Path
) -> None:
    # Each worker keeps its own key cache: a revocation through one would not reach the others.
    stderr = _refusal(pool_config(reliability_config(simulator.base_url)), database, tmp_path)
    assert "PLUMBLINE_KEY_INVALIDATION__CHANNEL=redis" in stderr
