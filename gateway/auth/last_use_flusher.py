"""LastUseFlusher: writes the keys' last uses every few seconds and once more at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import anyio.to_thread
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth.last_use import LastUse

log = logging.getLogger(__name__)
# At shutdown the last flush gets this long: a hung database must not hold the exit.
SHUTDOWN_FLUSH_S = 5.0
# The repository function that writes them (`plumbline.repositories.api_keys.record_last_used`,
# passed in by the lifecycle so the proxy's import graph holds no ORM models).
WriteLastUse = Callable[[Session, dict[int, datetime]], int]


class LastUseFlusher:
    """Moves `LastUse` to `api_keys.last_used_at`: one transaction per flush, one UPDATE per key."""

    def __init__(
        self,
        uses: LastUse,
        sessions: sessionmaker[Session],
        write: WriteLastUse,
        interval_s: float,
    ) -> None:
        self.uses = uses
        self._sessions = sessions
        self._write_uses = write
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None
        self.flushes = 0
        self.writes = 0
        self.failures = 0

    def start(self) -> None:
        """Flush every `interval_s` seconds from now on."""
        self._task = asyncio.get_running_loop().create_task(self._every_interval())

    async def _every_interval(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self.flush()

    async def flush(self) -> None:
        """Write what was noted since the last flush (nothing to do: no transaction)."""
        taken = self.uses.take()
        if taken:
            # Abandoned if cancelled: a write stuck on a lock must not hold up the shutdown.
            await anyio.to_thread.run_sync(self._write, taken, abandon_on_cancel=True)

    def _write(self, taken: dict[int, float]) -> None:
        uses = {key_id: datetime.fromtimestamp(at, UTC) for key_id, at in taken.items()}
        try:
            with self._sessions.begin() as session:
                written = self._write_uses(session, uses)
        except SQLAlchemyError as error:
            # Kept for the next flush: last use is bookkeeping, never worth failing a call.
            self.failures += 1
            self.uses.put_back(taken)
            log.warning("could not write the keys' last use (retried next flush): %s", error)
            return
        self.flushes += 1
        self.writes += written

    async def stop(self) -> None:
        """Stop the timer and write what is left (the engine must still be open)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            async with asyncio.timeout(SHUTDOWN_FLUSH_S):
                await self.flush()
        except TimeoutError:
            log.warning(
                "keys' last use not written at shutdown: the database did not answer in %s s",
                SHUTDOWN_FLUSH_S,
            )

    def metric_families(self) -> Iterator[Metric]:
        """Flushes, rows written, failures, uses dropped over the bound, uses held, for /metrics."""
        flushes = CounterMetricFamily(
            "plumbline_key_last_used_flushes", "Transactions that wrote keys' last use"
        )
        flushes.add_metric([], self.flushes)
        writes = CounterMetricFamily(
            "plumbline_key_last_used_writes",
            "UPDATEs of api_keys.last_used_at (one per key per flush)",
        )
        writes.add_metric([], self.writes)
        failures = CounterMetricFamily(
            "plumbline_key_last_used_flush_failures", "Flushes the database refused (retried)"
        )
        failures.add_metric([], self.failures)
        dropped = CounterMetricFamily(
            "plumbline_key_last_used_dropped",
            "Uses not held because limits.key_last_used.max_keys distinct keys were waiting",
        )
        dropped.add_metric([], self.uses.dropped)
        held = GaugeMetricFamily("plumbline_key_last_used_pending", "Keys waiting to be flushed")
        held.add_metric([], len(self.uses))
        yield from (flushes, writes, failures, dropped, held)
