"""The invalidation channel down: a cached key is trusted for the bound only, never served stale.

A gateway on a Redis of the test's own, which the test kills and brings back; the gateway trusts
cached keys for 600 s, so a refusal here comes from the bound (0.3 s), not from the TTL.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

import psycopg
import pytest

from simulator.process import SimulatorProcess
from tests.reliability.redis_server import RedisServer, redis_server
from tests.security.invalidation_world import (
    CHANNEL_UP,
    FLUSHED,
    RECHECKS,
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

pytestmark = pytest.mark.xdist_group("security-key-invalidation-outage")
BOUND = {"PLUMBLINE_KEY_INVALIDATION__UNCONFIRMED_TTL_S": "0.3"}
BOUND["PLUMBLINE_KEY_INVALIDATION__HEARTBEAT_S"] = "0.1"


@dataclass
class World:
    """One gateway, its private Redis, its database."""

    gateway: GatewayProcess
    redis: RedisServer
    database: str
    env: dict[str, str]


@pytest.fixture
def world() -> Iterator[World]:
    with ExitStack() as exits:
        server = exits.enter_context(redis_server())
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(postgres_database("plumbline_inval_down"))
        env = channel_env(server.url, f"plumbline-test-down-{uuid.uuid4().hex[:8]}:", **BOUND)
        config = gateway_config(simulator.base_url, limits={"key_cache_ttl_s": 600})
        gateway = exits.enter_context(GatewayProcess(config, url, env=env))
        wait_channel_up(gateway)
        yield World(gateway, server, url, env)


def _redis_gone(world: World) -> None:
    world.redis.kill()
    wait_until(lambda: metric(world.gateway, CHANNEL_UP) == 0, timeout=30, what="channel down")


def test_a_key_revoked_while_the_channel_is_down_stops_within_the_bound(world: World) -> None:
    key = issue_key(world.database, "alpha")
    assert chat(world.gateway, key) == 200
    _redis_gone(world)
    revoked = cli(world.database, world.env, "keys", "revoke", key[3:13])
    assert revoked.returncode == 0, revoked.stderr
    assert "committed but could not be announced" in revoked.stderr
    # No message reaches the gateway: it refuses once its verdict is older than the bound.
    wait_until(lambda: chat(world.gateway, key) == 401, timeout=30, what="the key refused")
    assert metric(world.gateway, RECHECKS) >= 1
    # Redis back (empty, same port): resubscribed, and the whole cache flushed again.
    flushed = metric(world.gateway, FLUSHED)
    world.redis.start()
    wait_channel_up(world.gateway)
    assert metric(world.gateway, FLUSHED) > flushed
    assert metric(world.gateway, 'plumbline_key_invalidation_channel_events_total{event="lost"}')


def test_a_slow_database_does_not_stretch_the_bound_into_stale_serving(world: World) -> None:
    key = issue_key(world.database, "beta")
    assert chat(world.gateway, key) == 200
    _redis_gone(world)
    assert cli(world.database, world.env, "keys", "revoke", key[3:13]).returncode == 0
    rechecks = metric(world.gateway, RECHECKS)
    plain = world.database.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(plain) as locker, ThreadPoolExecutor(1) as pool:
        # Every lookup of a key now waits on the lock: the database is "slow".
        locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
        call = pool.submit(chat, world.gateway, key)
        wait_until(
            lambda: metric(world.gateway, RECHECKS) > rechecks,
            timeout=30,
            what="the cached key looked up again",
        )
        locker.rollback()
        # The lookup's answer, not the cached grant (which STALE_S would have served for 300 s).
        assert call.result(timeout=60) == 401
