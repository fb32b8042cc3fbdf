"""A key whose cached verdict expired is served while it is looked up again, even if that hangs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth import service as auth_service
from gateway.auth.key_cache import KeyCache
from gateway.auth.service import create_key, revoke_key
from plumbline.db import create_db_engine, make_session_factory
from tests.support.databases import postgres_database
from tests.support.waiting import wait_until

PEPPER = "stale-pepper"
TTL_S = 0.05


@pytest.fixture
def database() -> Iterator[tuple[str, sessionmaker[Session]]]:
    with postgres_database("plumbline_keycache") as url:
        engine = create_db_engine(url)
        yield url, make_session_factory(engine)
        engine.dispose()


def _expire(cache: KeyCache) -> None:
    """Return once every cached verdict is past its TTL (50 ms)."""
    wait_until(
        lambda: all(expires < time.monotonic() for expires, *_ in cache._entries.values()),
        timeout=5,
        what="every cached verdict past its TTL",
        poll=TTL_S / 5,
    )


async def _resolve_while_keys_are_locked(url: str, cache: KeyCache, key: str) -> object:
    """Resolve while another transaction holds the api_keys table: any lookup would hang."""
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as locker:
        locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
        # Returns only if nothing waited on the lock; the guard turns a hang into a failure.
        info = await asyncio.wait_for(cache.resolve(key), timeout=60)
        assert cache._refreshing, "a background lookup should be waiting on the lock"
        locker.rollback()
    return info


def test_a_hung_database_delays_a_stale_key_lookup_not_the_call(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    url, sessions = database
    with sessions() as session, session.begin():
        key = create_key(session, "alpha", PEPPER).plaintext
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=TTL_S)

    async def scenario() -> None:
        first = await cache.resolve(key)
        assert first is not None
        _expire(cache)
        served = await _resolve_while_keys_are_locked(url, cache, key)
        assert served == first
        await cache.settle()  # the lock is gone: the refresh finished and stored a new verdict
        assert all(expires > time.monotonic() for expires, *_ in cache._entries.values())

    asyncio.run(scenario())


def test_a_revoked_key_is_refused_once_the_refresh_has_seen_it(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    _, sessions = database
    with sessions() as session, session.begin():
        key = create_key(session, "beta", PEPPER).plaintext
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=TTL_S)

    async def scenario() -> None:
        assert await cache.resolve(key) is not None
        with sessions() as session, session.begin():
            revoke_key(session, key[3:13])
        _expire(cache)
        assert await cache.resolve(key) is not None  # stale, while the refresh runs
        await cache.settle()
        assert await cache.resolve(key) is None
        cache._entries.clear()
        assert await cache.resolve(key) is None  # and straight from the database

    asyncio.run(scenario())
