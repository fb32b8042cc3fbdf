"""Two gateway replicas of two workers each behind nginx, on one Postgres and one Redis."""

from __future__ import annotations

import signal
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import text

from bench.proxies.nginx_proxy import NginxProxy
from plumbline.db import create_db_engine
from simulator.process import SimulatorProcess
from tests.reliability.gateway_metrics import scrape, total
from tests.security.invalidation_world import APPLIED, FLUSHED, channel_env, metric
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import INDEMNITY, simulator_config
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("reliability-two-replicas")
REDIS = "redis://127.0.0.1:6379/0"
MESSAGES = [{"role": "user", "content": "What is the governing law of the agreement?"}]
WORKERS = 2
LIMIT = 12


@dataclass
class Fleet:
    """Two replicas, the load balancer in front of them, and the admin key."""

    replicas: list[GatewayProcess]
    balancer: NginxProxy
    database: str
    admin: dict[str, str]


@pytest.fixture(scope="module")
def fleet() -> Iterator[Fleet]:
    prefix = f"plumbline-test-fleet-{uuid.uuid4().hex[:8]}:"
    env = channel_env(REDIS, prefix)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(postgres_database("plumbline_fleet"))
        admin = issue_key(url, "platform", admin=True)
        limits = {"key_cache_ttl_s": 600, "rate_limits": {"store": "redis"}}
        config = gateway_config(simulator.base_url, limits=limits)
        args = ("--workers", str(WORKERS))
        replicas = [
            exits.enter_context(GatewayProcess(config, url, env=env, args=args)) for _ in range(2)
        ]
        for replica in replicas:
            # Each worker flushes its key cache when its subscription is confirmed.
            wait_until(lambda r=replica: metric(r, FLUSHED) >= WORKERS, timeout=60, what="subs")
        ports = [replica.port for replica in replicas]
        balancer = exits.enter_context(NginxProxy(*ports, retry_posts=True))
        yield Fleet(replicas, balancer, url, {"Authorization": f"Bearer {admin}"})
    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    client.close()


def _chat(url: str, key: str, **extra: Any) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": 4, **extra},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )


def _new_key(fleet: Fleet, team: str, **limits: int) -> str:
    created = httpx.post(
        f"{fleet.replicas[0].url}/api/admin/keys",
        json={"team": team, "name": uuid.uuid4().hex[:8], **limits},
        headers=fleet.admin,
        timeout=30,
    )
    assert created.status_code in (200, 201), created.text
    key: str = created.json()["key"]
    return key


def _rows(database: str, team: str) -> tuple[int, int]:
    """Calls recorded for a team: rows, and distinct request ids among them."""
    engine = create_db_engine(database)
    try:
        with engine.connect() as connection:
            found = connection.execute(
                text(
                    "SELECT count(*), count(DISTINCT c.request_id) FROM calls c "
                    "JOIN teams t ON t.id = c.team_id WHERE t.name = :team"
                ),
                {"team": team},
            ).one()
    finally:
        engine.dispose()
    return int(found[0]), int(found[1])


def _served(replica: GatewayProcess) -> float:
    return total(scrape(replica.url), "plumbline_calls_total")


def test_a_key_limit_holds_across_four_processes_and_every_call_is_counted_once(
    fleet: Fleet,
) -> None:
    key = _new_key(fleet, "limited", requests_per_minute=LIMIT)
    before = [_served(replica) for replica in fleet.replicas]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: _chat(fleet.balancer.url, key), range(3 * LIMIT)))
    admitted = sum(1 for a in answers if a.status_code == 200)
    assert {a.status_code for a in answers} == {200, 429}
    # A minute's refill could add one more at most in the seconds this takes.
    assert LIMIT <= admitted <= LIMIT + 1
    wait_until(
        lambda: _rows(fleet.database, "limited")[0] >= len(answers),
        timeout=60,
        what="every call recorded",
    )
    assert _rows(fleet.database, "limited") == (len(answers), len(answers))
    wait_until(
        lambda: sum(_served(r) for r in fleet.replicas) - sum(before) >= len(answers),
        timeout=60,
        what="every call counted",
    )
    served = [_served(r) - b for r, b in zip(fleet.replicas, before, strict=True)]
    assert sum(served) == len(answers)
    assert all(count > 0 for count in served)


def test_a_key_revoked_through_one_replica_is_refused_by_the_other(fleet: Fleet) -> None:
    a, b = fleet.replicas
    key = _new_key(fleet, "revoked")
    # Both of B's workers hold the key's grant for 600 s.
    wait_until(
        lambda: all(_chat(b.url, key).status_code == 200 for _ in range(4)),
        timeout=30,
        what="key granted on B",
    )
    before = metric(b, APPLIED)
    revoked = httpx.post(
        f"{a.url}/api/admin/keys/{key[3:13]}/revoke", headers=fleet.admin, timeout=30
    )
    assert revoked.status_code == 200
    wait_until(lambda: metric(b, APPLIED) >= before + WORKERS, timeout=30, what="applied on B")
    assert {_chat(b.url, key).status_code for _ in range(8)} == {401}


def test_sigterm_of_one_replica_loses_no_call(fleet: Fleet) -> None:
    key = _new_key(fleet, "drained")
    answered: list[int] = []
    half = threading.Event()

    def call(index: int) -> int:
        status = _chat(fleet.balancer.url, key, stream=True, max_tokens=16).status_code
        answered.append(status)
        if len(answered) >= 12:
            half.set()
        return status

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(call, i) for i in range(40)]
        assert half.wait(120)
        fleet.replicas[1].signal(signal.SIGTERM)
        statuses = [future.result() for future in futures]
    drained = fleet.replicas[1].process
    assert drained is not None and drained.wait(timeout=180) == 0
    assert statuses == [200] * len(statuses)
    wait_until(
        lambda: _rows(fleet.database, "drained")[0] >= len(statuses),
        timeout=60,
        what="every call recorded",
    )
    assert _rows(fleet.database, "drained") == (len(statuses), len(statuses))
