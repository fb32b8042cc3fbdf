"""The Redis lease semaphore: one bound across connections, renewed while held, freed on death."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from redis.asyncio import Redis

from tests.reliability.redis_server import RedisServer, redis_server
from workers.process_limits import ProcessLimits
from workers.redis_limits import RedisLimits

REDIS = "redis://127.0.0.1:6379/0"


def limits(prefix: str, lease_s: float = 5.0, per_backend: int = 3) -> RedisLimits:
    return RedisLimits(
        Redis.from_url(REDIS),
        prefix=prefix,
        per_suite=100,
        per_backend=per_backend,
        lease_s=lease_s,
    )


@pytest.fixture
def prefix() -> str:
    return f"plumbline-test-limits-{uuid.uuid4().hex[:8]}:"


def test_the_bound_holds_across_connections_as_it_would_across_workers(prefix: str) -> None:
    async def scenario() -> int:
        workers = [limits(prefix), limits(prefix)]  # two processes' worth of connections
        active = peak = 0

        async def call(worker: RedisLimits) -> None:
            nonlocal active, peak
            async with worker.slot("suite", "tiny"):
                active += 1
                peak = max(peak, active)
                await asyncio.sleep(0.02)
                active -= 1

        await asyncio.gather(*(call(workers[i % 2]) for i in range(30)))
        held = await workers[0].held("backend", "tiny")
        for worker in workers:
            await worker.aclose()
        assert held == 0
        return peak

    assert asyncio.run(scenario()) == 3


def test_a_dead_holders_slot_comes_back_after_its_lease(prefix: str) -> None:
    async def scenario() -> None:
        dead, alive = limits(prefix, lease_s=0.5, per_backend=1), limits(prefix, per_backend=1)
        holding = dead.lease("backend", "tiny", 1)
        await holding.__aenter__()
        assert dead._renewer is not None
        dead._renewer.cancel()  # the process froze or was killed: no renewals, no release
        await dead.redis.aclose()
        async with alive.lease("backend", "tiny", 1):
            assert await alive.held("backend", "tiny") == 1
        await alive.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 20))


def test_a_live_holder_keeps_its_slot_past_the_lease_by_renewing(prefix: str) -> None:
    async def scenario() -> None:
        holder, waiter = limits(prefix, lease_s=1.5, per_backend=1), limits(prefix, per_backend=1)
        async with holder.lease("backend", "tiny", 1):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(waiter.lease("backend", "tiny", 1).__aenter__(), 4.0)
        async with waiter.lease("backend", "tiny", 1):
            pass
        await holder.aclose()
        await waiter.aclose()

    asyncio.run(scenario())


def test_a_process_asks_redis_once_for_a_burst_of_waiters_and_serves_them_in_order(
    prefix: str,
) -> None:
    async def scenario() -> tuple[int, list[int]]:
        worker = limits(prefix, per_backend=10)
        asks = 0
        acquire = worker._acquire

        async def counted(**kwargs: object) -> object:
            nonlocal asks
            asks += 1
            return await acquire(**kwargs)

        worker._acquire = counted
        order: list[int] = []

        async def call(index: int) -> None:
            async with worker.lease("backend", "tiny", 10):
                order.append(index)
                await asyncio.sleep(0.05)

        await asyncio.gather(*(call(i) for i in range(10)))
        held = await worker.held("backend", "tiny")
        await worker.aclose()
        assert held == 0
        return asks, order

    asks, order = asyncio.run(scenario())
    assert asks == 1 and order == list(range(10))


def test_a_waiter_cancelled_in_line_leaves_no_slot_behind(prefix: str) -> None:
    async def scenario() -> None:
        worker = limits(prefix, per_backend=1)
        async with worker.lease("backend", "tiny", 1):
            waiting = asyncio.ensure_future(worker.lease("backend", "tiny", 1).__aenter__())
            await asyncio.sleep(0.1)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
        assert await worker.held("backend", "tiny") == 0
        async with worker.lease("backend", "tiny", 1):
            assert await worker.held("backend", "tiny") == 1
        await worker.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_slot_freed_by_another_process_is_taken_within_a_poll(prefix: str) -> None:
    async def scenario() -> float:
        holder, waiter = limits(prefix, per_backend=1), limits(prefix, per_backend=1)
        released = 0.0

        async def hold() -> None:
            nonlocal released
            async with holder.lease("backend", "tiny", 1):
                await asyncio.sleep(0.3)
            released = asyncio.get_running_loop().time()

        holding = asyncio.create_task(hold())
        await asyncio.sleep(0.05)
        async with waiter.lease("backend", "tiny", 1):
            taken = asyncio.get_running_loop().time()
        await holding
        await holder.aclose()
        await waiter.aclose()
        return taken - released

    # The waiter polls every 25 ms (jittered up to 1.5x); a backoff would have left it idle.
    assert asyncio.run(scenario()) < 0.2


def test_process_limits_bound_every_event_loop_of_the_process() -> None:
    shared = ProcessLimits(per_suite=100, per_backend=2, poll_s=0.001)
    peak = active = 0

    async def call() -> None:
        nonlocal active, peak
        async with shared.slot("suite", "tiny"):
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    async def loop() -> None:
        await asyncio.gather(*(call() for _ in range(10)))

    threads = [threading.Thread(target=asyncio.run, args=(loop(),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 2 and shared.held("backend", "tiny") == 0


def test_slots_are_taken_again_at_once_after_redis_restarts() -> None:
    async def scenario(server: RedisServer) -> int:
        connect = RedisLimits.connect(server.url, prefix="restart:", per_suite=2, per_backend=2)
        async with connect as restarting:
            async with restarting.slot("suite", "tiny"):
                pass  # the pooled connection Redis is about to close
            server.kill()
            server.start()
            async with restarting.slot("suite", "tiny"):
                return await restarting.held("backend", "tiny")

    with redis_server() as server:
        assert asyncio.run(scenario(server)) == 1
