"""Wait on a condition with a deadline: tests poll for the event, never sleep a fixed time.

This is the one module of the tests allowed to call `time.sleep` (ruff TID251 bans it elsewhere):
every pause here is a poll interval of a loop that ends when its condition holds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_S = 0.05


def wait_for(
    probe: Callable[[], T | None], *, timeout: float, what: str, poll: float = POLL_S
) -> T:
    """The first truthy value `probe()` returns; fail naming `what` if none within `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s (last seen: {found!r})")
        time.sleep(poll)


def wait_until(
    check: Callable[[], bool], *, timeout: float, what: str, poll: float = POLL_S
) -> None:
    """Return once `check()` is true; fail naming `what` if it is not within `timeout` seconds."""
    wait_for(lambda: check() or None, timeout=timeout, what=what, poll=poll)


async def wait_until_async(
    check: Callable[[], bool], *, timeout: float, what: str, poll: float = POLL_S
) -> None:
    """`wait_until` for a test on an event loop: polls without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(poll)


def wait_past_wall_clock(instant: float, *, what: str) -> None:
    """Return once the wall clock (Unix seconds) has passed `instant`, e.g. a bucket boundary."""
    wait_until(
        lambda: time.time() > instant, timeout=max(0.0, instant - time.time()) + 5, what=what
    )
