"""SampleWrites: the claims and answers of one execution, written together in few transactions.

A transaction per claim and per answer cost every sample two thread hops and six round trips,
and queued them behind each other on the thread pool. Here whatever claims and answers arrive
while one write is under way go to the database together, in the next transaction.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from evals.runs.repository import samples as sample_repo
from evals.transaction import in_thread_transaction


class SampleWrites:
    """Coalesces sample claims and stored outcomes; one writer task at a time."""

    def __init__(self, sessions: sessionmaker[Session], lease_s: float) -> None:
        self.sessions = sessions
        self.lease_s = lease_s
        self._claims: dict[int, asyncio.Future[bool]] = {}
        self._rows: list[tuple[dict[str, Any], asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def claim(self, sample_id: int) -> bool:
        """Claim a sample unless it is finished or held by a live claim; True if claimed."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._claims[sample_id] = future
        self._start()
        return await future

    async def finish(self, row: dict[str, Any]) -> None:
        """Store a sample's outcome: its `id` and the values to set."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._rows.append((row, future))
        self._start()
        await future

    def _start(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_until_empty())

    async def _write_until_empty(self) -> None:
        while self._claims or self._rows:
            claims, self._claims = self._claims, {}
            rows, self._rows = self._rows, []
            waiting = [*claims.values(), *(future for _, future in rows)]
            try:
                claimed = await in_thread_transaction(
                    self.sessions, self._write, [row for row, _ in rows], list(claims)
                )
            except asyncio.CancelledError:
                for future in waiting:
                    future.cancel()
                raise
            except Exception as error:
                # Each waiting call fails as it would have with a transaction of its own.
                for future in waiting:
                    if not future.done():
                        future.set_exception(error)
                continue
            for sample_id, future in claims.items():
                if not future.done():
                    future.set_result(sample_id in claimed)
            for _, future in rows:
                if not future.done():
                    future.set_result(True)

    def _write(self, session: Session, rows: list[dict[str, Any]], claims: list[int]) -> set[int]:
        sample_repo.finish_many(session, rows)
        now = datetime.now(UTC)
        expired = now - timedelta(seconds=self.lease_s)
        return sample_repo.claim_many(session, claims, now, expired)
