"""LogSink: a bounded in-memory queue drained by one writer thread in batches.

The hot path only appends to a deque. The writer turns records into rows, writes them in one
transaction per batch and, when the database is unreachable, spools them to disk and replays
them later. Nothing is dropped silently: every record ends up written, spooled or counted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.recording.calls_repository import days_of, ensure_day_partitions, write_batch
from gateway.recording.partitions import Slot
from gateway.recording.rows import RowBatch, RowObserver, build_rows
from gateway.recording.spool import Spool
from gateway.recording.stored_text import RedactionPolicy

log = logging.getLogger(__name__)
RETRY_INTERVAL_S = 1.0


@dataclass(slots=True)
class SinkStats:
    """Counters the sink exposes in /metrics and /health."""

    submitted: int = 0
    written: int = 0
    spooled: int = 0
    replayed: int = 0
    dropped: int = 0
    failed_batches: int = 0
    database_up: bool = True
    last_batch_seconds: float = 0.0


class LogSink:
    """Accepts records from the event loop and writes them from its own thread."""

    def __init__(
        self, engine: Engine, config: RecordingConfig, observer: RowObserver | None = None
    ) -> None:
        self.engine = engine
        self.observer = observer
        self.config = config
        self.spool = Spool(config.spool_dir)
        self.stats = SinkStats()
        self._queue: deque[CallRecord] = deque()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.policy = RedactionPolicy(config.redaction)
        # (day, retention class) slots whose partitions this process has made sure exist.
        self._slots_ready: set[Slot] = set()
        self._next_retry = 0.0
        self._busy = False
        # Start by looking for batches an earlier process left in the spool.
        self._spool_has_batches = True

    @property
    def queue_depth(self) -> int:
        """Records waiting for the writer."""
        return len(self._queue)

    def start(self) -> None:
        """Start the writer thread."""
        self._thread = threading.Thread(target=self._run, name="plumbline-log-sink", daemon=True)
        self._thread.start()

    def submit(self, record: CallRecord) -> None:
        """Queue a record; never blocks on the database."""
        self.stats.submitted += 1
        if len(self._queue) >= self.config.queue_capacity:
            # The writer is behind: keep the record on disk rather than grow without bound.
            self._spool(self._rows([record]))
            return
        self._queue.append(record)
        if len(self._queue) >= self.config.batch_size:
            self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Write (or spool) everything queued, then stop the thread."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the queue is empty and the last batch is written; True if it got there."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._queue and not self._busy:
                return True
            self._wake.set()
            time.sleep(0.005)
        return False

    def _run(self) -> None:
        interval = self.config.flush_interval_ms / 1000
        while True:
            self._wake.wait(interval)
            self._wake.clear()
            self._busy = True
            try:
                self._drain()
                self._maybe_replay()
            finally:
                self._busy = False
            if self._stopping and not self._queue:
                return

    def _drain(self) -> None:
        while self._queue:
            records: list[CallRecord] = []
            while self._queue and len(records) < self.config.batch_size:
                records.append(self._queue.popleft())
            self._write_or_spool(self._rows(records))

    def _rows(self, records: list[CallRecord]) -> RowBatch:
        batch = RowBatch()
        for record in records:
            try:
                rows = build_rows([record], self.policy)
            except Exception:
                # One malformed record must not take its batch down with it.
                self.stats.dropped += 1
                log.exception("call record %s could not be converted; dropped", record.id)
                continue
            if self.observer is not None:
                self.observer(record, rows.calls[0])
            batch.extend(rows)
        return batch

    def _write_or_spool(self, batch: RowBatch) -> None:
        if not len(batch):
            return
        if not self.stats.database_up and time.monotonic() < self._next_retry:
            self._spool(batch)
            return
        if self._write(batch):
            self.stats.written += len(batch)
        else:
            self._spool(batch)

    def _write(self, batch: RowBatch) -> bool:
        started = time.perf_counter()
        try:
            with self.engine.begin() as connection:
                slots = days_of(batch) - self._slots_ready
                if slots:
                    ensure_day_partitions(connection, slots)
                write_batch(connection, batch)
            self._slots_ready |= days_of(batch)
        except (SQLAlchemyError, OSError) as error:
            # The retention job may have dropped a partition this process made earlier.
            self._slots_ready.clear()
            self.stats.failed_batches += 1
            if self.stats.database_up:
                log.warning("database unreachable, spooling call records: %s", error)
            self.stats.database_up = False
            self._next_retry = time.monotonic() + RETRY_INTERVAL_S
            return False
        if not self.stats.database_up:
            log.info("database is back; replaying the spool")
        self.stats.database_up = True
        self.stats.last_batch_seconds = time.perf_counter() - started
        return True

    def _spool(self, batch: RowBatch) -> None:
        try:
            self.spool.write(batch)
            self.stats.spooled += len(batch)
            self._spool_has_batches = True
        except OSError:
            self.stats.dropped += len(batch)
            log.exception("spool write failed; %d call records lost", len(batch))

    def _maybe_replay(self) -> None:
        if not self._spool_has_batches:
            return
        if not self.stats.database_up and time.monotonic() < self._next_retry:
            return
        # Cleared first so a batch spooled meanwhile by `submit` raises it again.
        self._spool_has_batches = False
        for path, batch in self.spool.read_all():
            if not self._write(batch):
                self._spool_has_batches = True
                return
            path.unlink()
            self.stats.replayed += len(batch)
