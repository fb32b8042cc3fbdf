"""The per-process eval loop: resources opened once, shared by tasks on any thread, closed once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import pytest

from workers.eval_loop import EvalLoop


class Opened:
    """Counts openings and closings of a fake resource (a client, a Redis connection)."""

    def __init__(self, failures: int = 0) -> None:
        self.opened = 0
        self.closed = 0
        self.failures = failures

    @asynccontextmanager
    async def resource(self) -> AsyncIterator[asyncio.AbstractEventLoop]:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("away")
        self.opened += 1
        try:
            yield asyncio.get_running_loop()
        finally:
            self.closed += 1

    async def open(self, exits: AsyncExitStack) -> asyncio.AbstractEventLoop:
        return await exits.enter_async_context(self.resource())


async def loop_of(resource: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop:
    assert resource is asyncio.get_running_loop()
    return resource


def test_tasks_on_several_threads_share_one_loop_and_one_opening() -> None:
    opened = Opened()
    loop = EvalLoop(opened.open)
    seen: list[asyncio.AbstractEventLoop] = []
    threads = [threading.Thread(target=lambda: seen.append(loop.run(loop_of))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen.append(loop.run(loop_of))
    assert len(set(seen)) == 1 and opened.opened == 1
    loop.close()
    assert opened.closed == 1
    loop.close()  # twice is harmless


def test_a_failed_opening_is_retried_by_the_next_task() -> None:
    opened = Opened(failures=1)
    loop = EvalLoop(opened.open)
    with pytest.raises(ConnectionError):
        loop.run(loop_of)
    loop.run(loop_of)
    assert opened.opened == 1
    loop.close()
    assert opened.closed == 1


def test_an_error_of_the_work_reaches_the_task_and_the_loop_goes_on() -> None:
    loop = EvalLoop(Opened().open)

    async def broken(_: asyncio.AbstractEventLoop) -> None:
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        loop.run(broken)
    assert loop.run(loop_of) is not None
    loop.close()
