"""Two real gateways on one Postgres and one Redis: a change made anywhere reaches both at once.

Each gateway trusts a cached key for 600 s (`key_cache_ttl_s`), so a refusal seen here comes
from the invalidation each test waits on, never from a verdict expiring.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest
import redis

from simulator.process import SimulatorProcess
from tests.security.invalidation_world import (
    APPLIED,
    channel_env,
    chat,
    cli,
    metric,
    wait_channel_up,
)
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import INDEMNITY, simulator_config
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("security-key-invalidation")
REDIS = "redis://127.0.0.1:6379/0"


@dataclass
class Replicas:
    """Two gateways on one database and one invalidation channel."""

    a: GatewayProcess
    b: GatewayProcess
    database: str
    env: dict[str, str]
    admin: dict[str, str]


@pytest.fixture(scope="module")
def replicas() -> Iterator[Replicas]:
    prefix = f"plumbline-test-inval-{uuid.uuid4().hex[:8]}:"
    env = channel_env(REDIS, prefix)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(postgres_database("plumbline_inval"))
        admin = issue_key(url, "platform", admin=True)
        config = gateway_config(simulator.base_url, limits={"key_cache_ttl_s": 600})
        a, b = (exits.enter_context(GatewayProcess(config, url, env=env)) for _ in range(2))
        for gateway in (a, b):
            wait_channel_up(gateway)
        yield Replicas(a, b, url, env, {"Authorization": f"Bearer {admin}"})
    client = redis.Redis.from_url(REDIS)
    assert not list(client.scan_iter(f"{prefix}*"))  # pub/sub leaves no keys behind
    client.close()


def _cached_on_b(replicas: Replicas, team: str) -> str:
    key = issue_key(replicas.database, team)
    assert chat(replicas.b, key) == 200  # B now holds the key's verdict for 600 s
    return key


def _wait_applied(gateway: GatewayProcess, before: float) -> None:
    wait_until(
        lambda: metric(gateway, APPLIED) > before,
        timeout=30,
        what=f"the invalidation applied on {gateway.url}",
    )


def test_a_key_revoked_through_one_replica_is_refused_by_the_other(replicas: Replicas) -> None:
    key = _cached_on_b(replicas, "alpha")
    before = metric(replicas.b, APPLIED)
    revoked = httpx.post(
        f"{replicas.a.url}/api/admin/keys/{key[3:13]}/revoke", headers=replicas.admin, timeout=30
    )
    assert revoked.status_code == 200
    _wait_applied(replicas.b, before)
    assert chat(replicas.b, key) == 401
    assert chat(replicas.a, key) == 401


def test_a_key_revoked_with_the_cli_is_refused_by_both(replicas: Replicas) -> None:
    key = _cached_on_b(replicas, "beta")
    assert chat(replicas.a, key) == 200
    before = [metric(g, APPLIED) for g in (replicas.a, replicas.b)]
    done = cli(replicas.database, replicas.env, "keys", "revoke", key[3:13])
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    for gateway, seen in zip((replicas.a, replicas.b), before, strict=True):
        _wait_applied(gateway, seen)
        assert chat(gateway, key) == 401


def test_a_rotated_key_stops_on_the_other_replica_and_its_successor_works(
    replicas: Replicas,
) -> None:
    old = _cached_on_b(replicas, "gamma")
    before = metric(replicas.b, APPLIED)
    rotated = httpx.post(
        f"{replicas.a.url}/api/admin/keys/{old[3:13]}/rotate", headers=replicas.admin, timeout=30
    )
    assert rotated.status_code == 200
    _wait_applied(replicas.b, before)
    assert chat(replicas.b, old) == 401
    assert chat(replicas.b, rotated.json()["key"]) == 200


def test_a_grace_period_set_by_the_cli_is_kept_then_ended_everywhere(replicas: Replicas) -> None:
    old = _cached_on_b(replicas, "delta")
    before = metric(replicas.b, APPLIED)
    rotated = cli(replicas.database, replicas.env, "keys", "rotate", old[3:13], "--grace-s", "3600")
    assert rotated.returncode == 0, rotated.stderr
    _wait_applied(replicas.b, before)
    assert chat(replicas.b, old) == 200  # in its grace period: still served
    assert chat(replicas.b, rotated.stdout.strip()) == 200
    before = metric(replicas.b, APPLIED)
    ended = cli(replicas.database, replicas.env, "keys", "revoke", old[3:13])
    assert ended.returncode == 0, ended.stderr
    _wait_applied(replicas.b, before)
    assert chat(replicas.b, old) == 401


def test_a_team_limit_set_through_one_replica_binds_on_the_other(replicas: Replicas) -> None:
    key = _cached_on_b(replicas, "epsilon")
    before = metric(replicas.b, APPLIED)
    changed = httpx.patch(
        f"{replicas.a.url}/api/admin/teams/epsilon",
        json={"requests_per_minute": 1},
        headers=replicas.admin,
        timeout=30,
    )
    assert changed.status_code == 200
    _wait_applied(replicas.b, before)
    # B's cached verdict had no limit; the one it reads again allows one call a minute.
    assert [chat(replicas.b, key) for _ in range(2)] == [200, 429]
