"""Run blocking database work from async code: one transaction, in a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from sqlalchemy.orm import Session, sessionmaker

T = TypeVar("T")


def in_transaction(
    sessions: sessionmaker[Session], work: Callable[..., T], *args: object, **kwargs: object
) -> T:
    """Call `work(session, *args, **kwargs)` in a new session, committing if it returns."""
    with sessions.begin() as session:
        return work(session, *args, **kwargs)


async def in_thread_transaction(
    sessions: sessionmaker[Session], work: Callable[..., T], *args: object, **kwargs: object
) -> T:
    """`in_transaction` off the event loop, so database latency never stalls other calls."""
    return await asyncio.to_thread(partial(in_transaction, sessions, work, *args, **kwargs))
