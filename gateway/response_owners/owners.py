"""ResponseOwners: the proxy's view of response ownership (the database behind a protocol).

The proxy must not import the ORM (the import contracts in pyproject.toml), so the queries are
named here as a protocol and `gateway.response_owners.repository` is the one in use.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.errors import GatewayError

# Owners never change once written, so a replica may keep the ones it has seen.
CACHED_OWNERS = 10_000
LOOKUP_THREADS = 8
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class StoredOwner:
    """The owner of one stored response, as recorded when vLLM created it."""

    response_id: str
    team_id: int
    model: str
    backend: str
    background: bool = False
    added_top_logprobs: int | None = None


class OwnerQueries(Protocol):
    """The database questions ownership asks (`repository.OwnerRepository` answers them)."""

    def count_for_team(self, session: Session, team_id: int, model: str) -> int:
        """How many responses of `model` the team has stored."""
        ...

    def insert(self, session: Session, owner: StoredOwner, settled: bool) -> None:
        """Record a new response's owner (settled: its usage is recorded already)."""
        ...

    def find(self, session: Session, response_id: str) -> StoredOwner | None:
        """The owner of a response, or None."""
        ...

    def settle(self, session: Session, response_id: str) -> bool:
        """Mark the response's usage recorded; True only for the one call that did."""
        ...


def store_unreachable() -> GatewayError:
    """The 503 of a call that needs the ownership table while the database is away."""
    return GatewayError(
        503, "The gateway cannot reach the store of response owners right now; retry shortly."
    )


class ResponseOwners:
    """Records and looks up response owners, on bounded threads, caching what it has seen."""

    def __init__(self, sessions: sessionmaker[Session], queries: OwnerQueries) -> None:
        self._sessions = sessions
        self._queries = queries
        self._threads = CapacityLimiter(LOOKUP_THREADS)
        self._seen: OrderedDict[str, StoredOwner] = OrderedDict()

    async def stored_count(self, team_id: int, model: str) -> int:
        """How many responses of `model` the team has stored."""
        return await self._run(self._count, team_id, model)

    async def record(self, owner: StoredOwner, settled: bool) -> None:
        """Write the owner of a response vLLM has just stored; durable once this returns."""
        await self._run(self._insert, owner, settled)
        self._remember(owner)

    async def find(self, response_id: str) -> StoredOwner | None:
        """The owner of a response id (from memory once seen), or None."""
        seen = self._seen.get(response_id)
        if seen is not None:
            self._seen.move_to_end(response_id)
            return seen
        owner = await self._run(self._find, response_id)
        if owner is not None:
            self._remember(owner)
        return owner

    async def settle(self, response_id: str) -> bool:
        """True when this call is the first to record the response's usage."""
        return await self._run(self._settle, response_id)

    def _remember(self, owner: StoredOwner) -> None:
        self._seen[owner.response_id] = owner
        while len(self._seen) > CACHED_OWNERS:
            self._seen.popitem(last=False)

    async def _run(self, work: Callable[..., R], *args: object) -> R:
        try:
            return await anyio.to_thread.run_sync(work, *args, limiter=self._threads)
        except SQLAlchemyError:
            raise store_unreachable() from None

    def _count(self, team_id: int, model: str) -> int:
        with self._sessions() as session:
            return self._queries.count_for_team(session, team_id, model)

    def _insert(self, owner: StoredOwner, settled: bool) -> None:
        with self._sessions() as session:
            self._queries.insert(session, owner, settled)
            session.commit()

    def _find(self, response_id: str) -> StoredOwner | None:
        with self._sessions() as session:
            return self._queries.find(session, response_id)

    def _settle(self, response_id: str) -> bool:
        with self._sessions() as session:
            settled = self._queries.settle(session, response_id)
            session.commit()
            return settled
