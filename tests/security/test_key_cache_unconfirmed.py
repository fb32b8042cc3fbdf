"""The key cache with an invalidation channel: trust bounded while it is down, no stale serving."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth import service as auth_service
from gateway.auth.invalidation.changes import KeyChange
from gateway.auth.invalidation.publisher import RedisChangePublisher
from gateway.auth.invalidation.subscriber import InvalidationSubscriber
from gateway.auth.key_cache import KeyCache
from gateway.auth.service import create_key, revoke_key
from plumbline.child_process import free_port
from plumbline.db import create_db_engine, make_session_factory
from tests.support.databases import postgres_database
from tests.support.waiting import wait_until_async

PEPPER = "unconfirmed-pepper"
TTL_S = 0.05
REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def database() -> Iterator[tuple[str, sessionmaker[Session]]]:
    with postgres_database("plumbline_unconfirmed") as url:
        engine = create_db_engine(url)
        yield url, make_session_factory(engine)
        engine.dispose()


def _cache(sessions: sessionmaker[Session], redis_url: str, channel: str) -> KeyCache:
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=TTL_S)
    cache.channel = InvalidationSubscriber(redis_url, channel, cache, TTL_S, TTL_S / 5)
    return cache


def _down(sessions: sessionmaker[Session]) -> KeyCache:
    """A cache whose channel points at a port nothing listens on: never confirmed live."""
    return _cache(sessions, f"redis://127.0.0.1:{free_port()}/0", "nowhere")


async def _past_bound(cache: KeyCache) -> None:
    await wait_until_async(
        lambda: all(
            time.monotonic() - verified > TTL_S for *_, verified in cache._entries.values()
        ),
        timeout=5,
        what="every verdict older than the bound",
        poll=TTL_S / 5,
    )


def _key(sessions: sessionmaker[Session], team: str) -> str:
    with sessions() as session, session.begin():
        return create_key(session, team, PEPPER).plaintext


def _revoke(sessions: sessionmaker[Session], key: str) -> None:
    with sessions() as session, session.begin():
        revoke_key(session, key[3:13])


def test_a_revoked_key_is_not_served_stale_while_the_database_is_slow(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    url, sessions = database
    key = _key(sessions, "alpha")
    cache = _down(sessions)

    async def scenario() -> None:
        assert await cache.resolve(key) is not None
        _revoke(sessions, key)
        await _past_bound(cache)  # and past the TTL: without a channel STALE_S would serve it
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as locker:
            locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
            call = asyncio.create_task(cache.resolve(key))
            await wait_until_async(
                lambda: cache.lookup_counts()["running"] == 1, timeout=10, what="lookup waiting"
            )
            assert not call.done(), "a stale verdict was served while the lookup waited"
            locker.rollback()
        assert await call is None
        assert cache.rechecks == 1

    asyncio.run(scenario())


def test_a_database_that_is_down_is_not_covered_for_by_the_cache(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    _, sessions = database
    key = _key(sessions, "beta")
    cache = _down(sessions)

    async def scenario() -> None:
        assert await cache.resolve(key) is not None
        await _past_bound(cache)
        down = create_db_engine(f"postgresql://postgres@127.0.0.1:{free_port()}/gone")
        cache._sessions = make_session_factory(down)
        with pytest.raises(SQLAlchemyError):
            await cache.resolve(key)

    asyncio.run(scenario())


def test_a_lookup_overtaken_by_an_invalidation_does_not_cache_its_answer(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    url, sessions = database
    key = _key(sessions, "gamma")
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=600)

    async def scenario() -> None:
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as locker:
            locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
            call = asyncio.create_task(cache.resolve(key))
            await wait_until_async(
                lambda: cache.lookup_counts()["running"] == 1, timeout=10, what="lookup waiting"
            )
            cache.forget(KeyChange(prefix=key[3:13]))  # heard while the lookup was under way
            locker.rollback()
        assert await call is not None  # the call that asked gets the answer
        assert not cache._entries  # but it may predate the change: not kept for 600 s

    asyncio.run(scenario())


def test_a_live_channel_drops_what_it_hears_and_keeps_stale_serving(
    database: tuple[str, sessionmaker[Session]],
) -> None:
    url, sessions = database
    keys = [_key(sessions, "delta"), _key(sessions, "delta")]
    channel = f"plumbline-test-unconfirmed-{uuid.uuid4().hex[:8]}"
    cache = KeyCache(sessions, PEPPER, auth_service, ttl_s=TTL_S)
    subscriber = InvalidationSubscriber(REDIS, channel, cache, bound_s=2.0, heartbeat_s=0.1)
    cache.channel = subscriber
    publisher = RedisChangePublisher(REDIS, channel)

    async def scenario() -> None:
        subscriber.start()
        await wait_until_async(
            lambda: subscriber.confirmed(time.monotonic()), timeout=10, what="live"
        )
        for key in keys:
            assert await cache.resolve(key) is not None
        await asyncio.to_thread(publisher.publish, [KeyChange(prefix=keys[0][3:13])])
        await wait_until_async(
            lambda: subscriber.outcomes["applied"] == 1, timeout=10, what="heard"
        )
        assert [info.prefix for _, info, _ in cache._entries.values()] == [keys[1][3:13]]
        # Live: a verdict past its TTL is served while the database hangs, as without a channel.
        await wait_until_async(
            lambda: all(e < time.monotonic() for e, *_ in cache._entries.values()),
            timeout=5,
            what="past the TTL",
        )
        with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as locker:
            locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
            assert await asyncio.wait_for(cache.resolve(keys[1]), timeout=60) is not None
            locker.rollback()
        await cache.settle()
        await asyncio.to_thread(publisher._redis.publish, channel, b"not json")
        await wait_until_async(
            lambda: subscriber.outcomes["unreadable"] == 1, timeout=10, what="unreadable heard"
        )
        assert not cache._entries  # a message it cannot read drops everything
        await subscriber.stop()

    try:
        asyncio.run(scenario())
    finally:
        publisher.close()
