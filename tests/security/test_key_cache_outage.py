"""A database that is down is asked about a stale key once per retry interval, not per call."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth import key_cache
from gateway.auth import service as auth_service
from gateway.auth.key_cache import KeyCache
from gateway.auth.service import create_key
from plumbline.child_process import free_port
from plumbline.db import create_db_engine, make_session_factory
from tests.support.databases import postgres_database
from tests.support.waiting import wait_until

PEPPER = "outage-pepper"
TTL_S = 0.05
CALLS = 20
FAILED = "key lookup failed"


@pytest.fixture
def sessions() -> Iterator[sessionmaker[Session]]:
    with postgres_database("plumbline_keyoutage") as url:
        engine = create_db_engine(url)
        yield make_session_factory(engine)
        engine.dispose()


def _stale_key_with_database_down(sessions: sessionmaker[Session]) -> tuple[KeyCache, str]:
    """A cache holding a granted key past its TTL, whose database no longer answers."""
    with sessions() as session, session.begin():
        key = create_key(session, "gamma", PEPPER).plaintext
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=TTL_S)
    assert asyncio.run(cache.resolve(key)) is not None
    wait_until(
        lambda: all(expires < time.monotonic() for expires, *_ in cache._entries.values()),
        timeout=5,
        what="the cached verdict expired",
    )
    # Nothing listens on a fresh free port: every connection attempt is refused, as in a crash.
    down = create_db_engine(f"postgresql://postgres@127.0.0.1:{free_port()}/gone")
    cache._sessions = make_session_factory(down)
    return cache, key


def _failures(caplog: pytest.LogCaptureFixture) -> int:
    return sum(1 for r in caplog.records if r.getMessage().startswith(FAILED))


def test_calls_during_an_outage_share_one_failed_refresh(
    sessions: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    cache, key = _stale_key_with_database_down(sessions)
    caplog.set_level(logging.WARNING, logger="gateway.auth.key_cache")

    async def calls() -> None:
        for _ in range(CALLS):
            assert await cache.resolve(key) is not None  # served from the stale verdict
            await cache.settle()  # its refresh failed before the next call comes

    asyncio.run(calls())
    # Main started a refresh for every call once the last one had failed: 20 here, 150 a
    # second in a Postgres outage under load, each a connection attempt on the gateway's CPU.
    assert _failures(caplog) == 1


def test_a_failed_refresh_is_retried_after_the_interval(
    sessions: sessionmaker[Session],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(key_cache, "REFRESH_RETRY_S", 0.2)
    cache, key = _stale_key_with_database_down(sessions)
    caplog.set_level(logging.WARNING, logger="gateway.auth.key_cache")

    async def call() -> None:
        assert await cache.resolve(key) is not None
        await cache.settle()

    asyncio.run(call())
    assert _failures(caplog) == 1

    def retried() -> bool:
        asyncio.run(call())
        return _failures(caplog) == 2

    wait_until(retried, timeout=5, what="a second refresh after the retry interval")
