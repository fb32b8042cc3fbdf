"""Rate limits in a real Redis: atomic across processes, tokens settled, failures bounded."""

from __future__ import annotations

import asyncio
import multiprocessing
import uuid
from collections.abc import Iterator
from dataclasses import replace
from multiprocessing.synchronize import Barrier

import orjson
import pytest
import redis

from gateway.auth.keys import KeyInfo
from gateway.proxy.rate_limits import Grant, LimitsUnavailable, RateLimiter, RateLimitExceeded
from gateway.proxy.rate_limits.redis_buckets import connect_buckets
from gateway.rate_limit_config import RateLimitConfig
from tests.reliability.redis_server import RedisServer, redis_server
from tests.support.otlp_receiver import HungCollector, free_port_url

REDIS = "redis://127.0.0.1:6379/0"
KEY = KeyInfo(key_id=7, team_id=3, team_name="legal", is_admin=False, store_bodies=False)
PROCESSES, CALLS_EACH, LIMIT = 4, 40, 50


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"plumbline-test-rl-{uuid.uuid4().hex[:8]}:"
    yield name
    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{name}*"):
        client.delete(key)
    client.close()


def _limiter(prefix: str, url: str = REDIS, **config: object) -> RateLimiter:
    settings = RateLimitConfig.model_validate({"store": "redis", **config})
    return RateLimiter(settings, connect_buckets(url, prefix, settings))


async def _outcome(limiter: RateLimiter, info: KeyInfo, reserve: int = 0) -> Grant | int:
    """The grant, or the status of the refusal."""
    try:
        return await limiter.admit(info, reserve)
    except (RateLimitExceeded, LimitsUnavailable) as error:
        return error.status


def _redis_seconds() -> float:
    client = redis.Redis.from_url(REDIS)
    seconds, micros = client.time()
    client.close()
    return float(seconds) + micros / 1e6


def _one_process(prefix: str, start: Barrier, results: multiprocessing.SimpleQueue[int]) -> None:
    async def burst() -> int:
        limiter = _limiter(prefix, redis_timeout_s=5.0)
        info = replace(KEY, key_requests_per_minute=LIMIT)
        start.wait()
        outcomes = await asyncio.gather(*(_outcome(limiter, info) for _ in range(CALLS_EACH)))
        await limiter.aclose()
        assert all(o == 429 for o in outcomes if not isinstance(o, Grant))
        return sum(isinstance(o, Grant) for o in outcomes)

    results.put(asyncio.run(burst()))


def test_a_limit_holds_across_processes_asking_at_once(prefix: str) -> None:
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(PROCESSES + 1), context.SimpleQueue()
    workers = [
        context.Process(target=_one_process, args=(prefix, start, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    began = _redis_seconds()
    start.wait()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    elapsed = _redis_seconds() - began
    admitted = sum(results.get() for _ in workers)
    # A full bucket, plus what refilled while the burst ran (Redis's own clock), never more;
    # and no allowance is kept per process, so never less than the full limit.
    assert LIMIT <= admitted <= LIMIT + int(elapsed * LIMIT / 60)
    assert PROCESSES * CALLS_EACH > LIMIT + 60  # the burst asked for far more


def test_a_call_takes_from_every_bucket_or_from_none(prefix: str) -> None:
    async def scenario() -> list[Grant | int]:
        limiter = _limiter(prefix)
        info = replace(KEY, requests_per_minute=2, key_requests_per_minute=3)
        outcomes = [await _outcome(limiter, info) for _ in range(5)]
        # The three refusals took nothing from the key's bucket: one of its three is left.
        outcomes += [await _outcome(limiter, replace(info, requests_per_minute=None))]
        outcomes += [await _outcome(limiter, replace(info, requests_per_minute=None))]
        await limiter.aclose()
        return outcomes

    outcomes = asyncio.run(scenario())
    admitted = [isinstance(o, Grant) for o in outcomes]
    assert admitted == [True, True, False, False, False, True, False]


def test_tokens_are_reserved_then_refunded_or_charged_from_the_usage(prefix: str) -> None:
    async def scenario() -> None:
        limiter = _limiter(prefix)
        info = replace(KEY, tokens_per_minute=6000)
        first = await limiter.admit(info, 4000)
        assert await _outcome(limiter, info, 4000) == 429  # 2000 left
        await limiter.settle(first, 1000)  # 3000 handed back: 5000
        second = await limiter.admit(info, 4000)  # 1000 left
        await limiter.settle(second, 10_000)  # 6000 more: 5000 in debt
        with pytest.raises(RateLimitExceeded) as refused:
            await limiter.admit(info, 0)
        # Out of 5000 of debt at 100 a second, less what refilled since (well under a minute).
        assert 20 < refused.value.refusal.retry_after_s <= 50.01
        assert refused.value.refusal.unit == "tokens"
        await limiter.aclose()

    asyncio.run(scenario())


def test_hostile_amounts_are_bounded_by_the_bucket(prefix: str) -> None:
    async def scenario() -> None:
        limiter = _limiter(prefix)
        info = replace(KEY, key_id=2**62, tokens_per_minute=600, key_tokens_per_minute=10**15)
        huge = await limiter.admit(info, 10**30)  # reserves a full bucket, no more
        assert {take.amount for take in huge.tokens} == {600, 10**15}
        assert await _outcome(limiter, info, 100) == 429
        await limiter.settle(huge, 10**40)  # debt stops at one minute's: 600
        with pytest.raises(RateLimitExceeded) as refused:
            await limiter.admit(info, -5)
        assert 60 < refused.value.refusal.retry_after_s <= 120.1
        # A negative usage is none: the reservation comes back, never more than a full bucket.
        other = replace(KEY, team_id=4, tokens_per_minute=600)
        await limiter.settle(await limiter.admit(other, 600), -(10**40))
        assert isinstance(await limiter.admit(other, 600), Grant)
        assert await _outcome(limiter, other, 100) == 429
        assert limiter.counts["error"] == 0
        await limiter.aclose()

    asyncio.run(scenario())


def _metric(limiter: RateLimiter, name: str, labels: dict[str, str]) -> float:
    for family in limiter.metric_families():
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    raise AssertionError(f"no {name}{labels}")


def test_redis_down_fails_open_to_local_limits_and_counts_it(prefix: str) -> None:
    async def scenario() -> None:
        limiter = _limiter(prefix, url=free_port_url().replace("http", "redis"))
        info = replace(KEY, requests_per_minute=2)
        outcomes = [await _outcome(limiter, info) for _ in range(3)]
        assert [isinstance(o, Grant) for o in outcomes] == [True, True, False]
        assert outcomes[2] == 429  # this process's own buckets still limit
        assert limiter.counts["error"] == 1  # then Redis is left alone for redis_retry_s
        unshared = "plumbline_rate_limit_unshared_admissions_total"
        assert _metric(limiter, unshared, {"mode": "open"}) == 3
        assert _metric(limiter, "plumbline_rate_limit_redis_up", {}) == 0
        await limiter.aclose()

    asyncio.run(scenario())


def test_redis_down_fails_closed_with_a_503_in_openais_shape(prefix: str) -> None:
    async def scenario() -> None:
        url = free_port_url().replace("http", "redis")
        limiter = _limiter(prefix, url=url, on_redis_failure="closed", redis_retry_s=0)
        info = replace(KEY, requests_per_minute=1000)
        with pytest.raises(LimitsUnavailable) as refused:
            await limiter.admit(info, 10)
        assert await _outcome(limiter, info) == 503
        error = orjson.loads(refused.value.body())["error"]
        assert error["type"] == "ServiceUnavailableError" and error["code"] == 503
        assert dict(refused.value.headers)[b"retry-after"] == b"1"
        assert limiter.counts["error"] == 2  # redis_retry_s 0: each call asks again
        assert limiter.counts["failed_closed"] == 2
        # A key without limits never needs Redis.
        assert isinstance(await limiter.admit(KEY, 10), Grant)
        await limiter.aclose()

    asyncio.run(scenario())


def test_a_hung_redis_costs_one_timeout_then_is_skipped(prefix: str) -> None:
    async def scenario() -> None:
        with HungCollector() as hung:
            url = hung.url.replace("http", "redis")
            limiter = _limiter(prefix, url=url, redis_timeout_s=0.2, redis_retry_s=300)
            info = replace(KEY, tokens_per_minute=1000)
            # The bound under test is redis_timeout_s; 30 s only stops a broken test hanging.
            grant = await asyncio.wait_for(limiter.admit(info, 100), 30)
            assert grant.store == "memory" and limiter.counts["timeout"] == 1
            await asyncio.wait_for(limiter.admit(info, 100), 30)
            assert limiter.counts["timeout"] == 1 and limiter.counts["failed_open"] == 2
            await asyncio.wait_for(limiter.settle(grant, 50), 30)  # settled where it was taken
            await limiter.aclose()

    asyncio.run(scenario())


def test_a_settlement_that_cannot_reach_redis_is_counted_not_raised(prefix: str) -> None:
    async def scenario() -> None:
        with HungCollector() as hung:
            limiter = _limiter(prefix, url=hung.url.replace("http", "redis"), redis_timeout_s=0.2)
            shared = _limiter(prefix)
            grant = await shared.admit(replace(KEY, tokens_per_minute=100), 50)
            await shared.aclose()
            await asyncio.wait_for(limiter.settle(grant, 10), 30)
            assert limiter.settlements_lost == 1 and limiter.counts["timeout"] == 1
            await limiter.aclose()

    asyncio.run(scenario())


def test_a_redis_that_dies_and_comes_back_is_used_again(prefix: str) -> None:
    async def scenario(server: RedisServer) -> list[str]:
        limiter = _limiter(prefix, url=server.url, redis_retry_s=0)
        info = replace(KEY, requests_per_minute=100)
        stores = [(await limiter.admit(info, 0)).store]
        server.kill()
        stores.append((await limiter.admit(info, 0)).store)
        server.start()  # the same port, empty: its buckets start full again
        stores.append((await limiter.admit(info, 0)).store)
        assert limiter.counts["error"] == 1 and limiter.counts["failed_open"] == 1
        await limiter.aclose()
        return stores

    with redis_server() as server:
        assert asyncio.run(scenario(server)) == ["redis", "memory", "redis"]
