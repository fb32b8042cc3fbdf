"""Wait on a condition with a deadline: tests poll for the event, never sleep a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable

POLL_S = 0.05


def wait_until(check: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Return once `check()` is true; fail naming `what` if it is not within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(POLL_S)
