"""Random well-formed keys cannot evict real keys, take the threads they need, or go unthrottled.

A real gateway on Postgres, whose `api_keys` table the test can lock so every key lookup hangs
where the test wants it to; X-Forwarded-For (trusted from loopback, as uvicorn does) gives each
flooding request its own client address, or one address to many.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("security-key-flood")
BODY = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
LOOKUP_THREADS = 2
MAX_WAITING = 6
# More hung lookups than anyio's default thread pool (40 threads) holds.
FLOOD = 48
WAITING_LOCKS = (
    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
    "WHERE c.relname = 'api_keys' AND NOT l.granted "
    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


@dataclass
class Flooded:
    """A gateway on Postgres with a granted key."""

    gateway: GatewayProcess
    database_url: str
    key: str
    calls: CallReader

    def post(self, key: str, client: str = "10.0.0.1", timeout: float = 60) -> httpx.Response:
        """A chat call with `key`, as if from `client`."""
        headers = {"Authorization": f"Bearer {key}", "X-Forwarded-For": client}
        return httpx.post(
            f"{self.gateway.url}/v1/chat/completions", json=BODY, headers=headers, timeout=timeout
        )

    def lookups(self) -> dict[str, float]:
        """The gateway's key lookup metrics, by state and outcome."""
        text = httpx.get(f"{self.gateway.url}/metrics", timeout=20).text
        found: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            if family.name.startswith("plumbline_key_lookup"):
                for sample in family.samples:
                    label = sample.labels.get("state") or sample.labels.get("outcome")
                    if label and not sample.name.endswith("_created"):
                        found[label] = sample.value
        return found

    @contextmanager
    def keys_locked(self) -> Iterator[psycopg.Connection]:
        """Hold the api_keys table: every key lookup waits until the block ends."""
        with psycopg.connect(self.database_url.replace("postgresql+psycopg", "postgresql")) as db:
            db.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
            with psycopg.connect(
                self.database_url.replace("postgresql+psycopg", "postgresql"), autocommit=True
            ) as watcher:
                yield watcher
            db.rollback()


def waiting_lookups(watcher: psycopg.Connection) -> int:
    """Lookups blocked on the api_keys lock (each is one database connection)."""
    row = watcher.execute(WAITING_LOCKS).fetchone()
    assert row is not None
    return int(row[0])


def until(condition: Callable[[], bool], what: str, within_s: float = 30.0) -> None:
    """Poll `condition` until it holds; fail after `within_s` (a guard, not a measurement)."""
    wait_until(condition, timeout=within_s, what=what)


def random_key(prefix: str | None = None) -> str:
    """A well-formed key that exists nowhere."""
    return f"pl-{prefix or secrets.token_hex(5)}.{secrets.token_urlsafe(32)}"


@contextmanager
def flooded_gateway(failed_per_minute: int) -> Iterator[Flooded]:
    """A gateway with small key lookup bounds, on its own Postgres database."""
    limits = {
        "key_lookups": {
            "max_granted_keys": 4,
            "max_unknown_keys": 8,
            "lookup_threads": LOOKUP_THREADS,
            "max_waiting_lookups": MAX_WAITING,
            "failed_lookups_per_minute": failed_per_minute,
        },
        # The flush of keys' last use would wait on the api_keys lock too: kept out of the counts.
        "key_last_used": {"flush_s": 3600},
    }
    with SimulatorProcess() as sim, postgres_database("plumbline_flood") as url:
        key = issue_key(url, "team-real")
        with GatewayProcess(gateway_config(sim.base_url, limits=limits), url) as gateway:
            calls = CallReader(url)
            yield Flooded(gateway, url, key, calls)
            calls.close()


@pytest.fixture(scope="module")
def flooded() -> Iterator[Flooded]:
    with flooded_gateway(failed_per_minute=100_000) as running:
        yield running


def test_unknown_keys_do_not_evict_a_granted_key(flooded: Flooded) -> None:
    assert flooded.post(flooded.key).status_code == 200
    for _ in range(20):
        assert flooded.post(random_key()).status_code == 401
    with flooded.keys_locked():
        # Still cached: served without a lookup (evicted, it would wait on the lock).
        assert flooded.post(flooded.key, timeout=20).status_code == 200


def test_a_flood_of_unknown_keys_cannot_take_the_threads_others_need(flooded: Flooded) -> None:
    assert flooded.post(flooded.key).status_code == 200
    before = flooded.lookups()
    with ThreadPoolExecutor(FLOOD) as pool, flooded.keys_locked() as watcher:
        hung: list[Future[httpx.Response]] = [
            pool.submit(flooded.post, random_key(), f"10.1.0.{i}") for i in range(FLOOD)
        ]
        refused = FLOOD - LOOKUP_THREADS - MAX_WAITING

        def settled() -> bool:
            now = flooded.lookups()
            return (now["running"], now["waiting"], now["refused"] - before["refused"]) == (
                LOOKUP_THREADS,
                MAX_WAITING,
                refused,
            )

        until(settled, "the flood's lookups running, queued and refused")
        assert waiting_lookups(watcher) == LOOKUP_THREADS
        # The thread pool that serves the read API and a granted key's calls is untouched.
        assert flooded.post(flooded.key, timeout=20).status_code == 200
        headers = {"Authorization": f"Bearer {flooded.key}"}
        listed = httpx.get(f"{flooded.gateway.url}/api/calls", headers=headers, timeout=20)
        assert listed.status_code == 200
        busy = [f.result() for f in hung if f.done()]
        assert len(busy) == refused
    statuses = sorted(f.result().status_code for f in hung)
    assert statuses == [401] * (LOOKUP_THREADS + MAX_WAITING) + [503] * refused
    answer = next(f.result() for f in hung if f.result().status_code == 503)
    assert answer.headers["retry-after"] == "1"
    assert "unknown API keys" in answer.json()["error"]["message"]
    assert flooded.calls.wait(answer.headers["x-plumbline-call-id"]).status_code == 503


def test_lookups_of_one_prefix_run_one_at_a_time(flooded: Flooded) -> None:
    prefix = secrets.token_hex(5)
    before = flooded.lookups()
    with ThreadPoolExecutor(5) as pool, flooded.keys_locked() as watcher:
        hung = [pool.submit(flooded.post, random_key(prefix), f"10.2.0.{i}") for i in range(5)]
        until(lambda: flooded.lookups()["joined"] - before["joined"] == 4, "4 lookups joined")
        assert flooded.lookups()["started"] - before["started"] == 1
        assert waiting_lookups(watcher) == 1
    assert [f.result().status_code for f in hung] == [401] * 5


def test_failed_lookups_from_one_address_are_throttled() -> None:
    with flooded_gateway(failed_per_minute=3) as gateway:
        assert gateway.post(gateway.key, "10.3.0.1").status_code == 200  # cached from here on
        for _ in range(3):
            assert gateway.post(random_key(), "10.9.9.9").status_code == 401
        throttled = gateway.post(random_key(), "10.9.9.9")
        assert throttled.status_code == 429
        error = throttled.json()["error"]
        assert error["type"] == "RateLimitError" and "unknown or revoked" in error["message"]
        assert int(throttled.headers["retry-after"]) >= 1
        row = gateway.calls.wait(throttled.headers["x-plumbline-call-id"])
        assert row.status_code == 429
        # Another address is not throttled, and a cached key needs no lookup at all.
        assert gateway.post(random_key(), "10.3.0.2").status_code == 401
        assert gateway.post(gateway.key, "10.9.9.9").status_code == 200
