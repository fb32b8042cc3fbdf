"""LogSink: a bounded in-memory queue, journaled to disk and written to the database in batches.

The hot path only appends to a deque. A journal thread turns the queued records into rows at
most `flush_interval_ms` after the first of them arrived and appends each batch to the spool
directory (fsynced) before anything else happens to it; a writer thread then writes the batch
to the database in one transaction and deletes its file. When the database is unreachable the
files stay and are replayed later. So a killed process loses at most the records queued since
the last journal pass, however slow or absent the database is. Nothing is dropped silently:
every record ends up written, spooled or counted as dropped. Both threads sleep on events while
there is nothing to do: an idle sink takes no CPU (no timer wakes it), except while the
database is away or spooled batches wait for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.recording.calls_repository import (
    database_answers,
    days_of,
    ensure_day_partitions,
    mark_late_calls,
    write_batch,
)
from gateway.recording.column_fit import ColumnFitter
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.logprob_vocab import Vocabulary
from gateway.recording.partitions import Slot
from gateway.recording.refusals import refused_for_content
from gateway.recording.row_split import call_id, row_count, rows_by_call, single_rows
from gateway.recording.rows import RowBatch, RowObserver, build_rows
from gateway.recording.sink_stats import SinkStats
from gateway.recording.spool import Spool, SpoolFullError
from gateway.recording.stored_text import RedactionPolicy

log = logging.getLogger(__name__)
RETRY_INTERVAL_S = 1.0
# Journaled batches kept in memory for the writer; beyond this it reads them back from disk.
MAX_BATCHES_IN_MEMORY = 64


class LogSink:
    """Accepts records from the event loop; journals and writes them from two threads."""

    def __init__(
        self,
        engine: Engine,
        config: RecordingConfig,
        observer: RowObserver | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.engine = engine
        self.observer = observer
        # Called (from the sink's threads) whenever a counter or the database's state changed.
        self.on_change = on_change
        self.config = config
        self.spool = Spool(config.spool_dir, config.spool_max_bytes)
        self.fitter = ColumnFitter()
        self.stats = SinkStats()
        self._queue: deque[CallRecord] = deque()
        # Journaled batches for the writer: the file, and the rows unless memory is short.
        self._journaled: deque[tuple[Path | None, RowBatch | None]] = deque()
        # Journal files the writer has not handled yet, so replay leaves them alone.
        self._in_hand: set[Path] = set()
        self._hand_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        # Set by the first record queued since the last journal pass; `_hurry` by anything
        # that must not wait out the interval for more records (a full batch, a flush, stop).
        self._wake = threading.Event()
        self._hurry = threading.Event()
        self._writer_wake = threading.Event()
        self._stopping = False
        self._journal_done = False
        self._threads: list[threading.Thread] = []
        self.policy = RedactionPolicy(config.redaction)
        self.v3 = V3Rows(Vocabulary(engine, config.logprob_vocab), self.stats)
        # (day, retention class) slots whose partitions this process has made sure exist.
        self._slots_ready: set[Slot] = set()
        self._next_retry = 0.0
        self._journal_busy = False
        self._writer_busy = False
        # Start by looking for batches an earlier process left in the spool.
        self._spool_has_batches = True

    @property
    def queue_depth(self) -> int:
        """Records waiting to be journaled."""
        return len(self._queue)

    def spooled_files(self) -> int:
        """Spooled batches waiting for the database (not counting those being written now)."""
        with self._hand_lock:
            return sum(1 for p in self.spool.pending_files() if p not in self._in_hand)

    def notice_spooled(self) -> None:
        """Batches were moved into the spool from outside: replay them with the others."""
        self.spool.recount()
        self._spool_has_batches = True
        self._writer_wake.set()

    def start(self) -> None:
        """Start the journal and writer threads."""
        self._threads = [
            threading.Thread(target=self._journal_loop, name="plumbline-log-journal", daemon=True),
            threading.Thread(target=self._write_loop, name="plumbline-log-sink", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, record: CallRecord) -> None:
        """Queue a record; never blocks on the database."""
        self.stats.submitted += 1
        if len(self._queue) >= self.config.queue_capacity:
            # The journal is behind (a very slow disk): spool this one rather than grow.
            self._spool(self._rows([record]))
            self._count("journaled", 1)
            return
        self._queue.append(record)
        if self._journal_done:
            # Stopped (a call cut at the end of the shutdown drain): nobody journals any more.
            self._spool_stragglers()
        elif len(self._queue) >= self.config.batch_size:
            self.journal_now()
        elif not self._wake.is_set():
            self._wake.set()

    def journal_now(self) -> None:
        """Journal what is queued without waiting out the interval (a batch arrived whole)."""
        self._hurry.set()
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Journal everything queued, write (or leave spooled) what was journaled, then stop."""
        self._stopping = True
        self.journal_now()
        for thread in self._threads:
            thread.join(timeout)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the queue is empty and the last batch is written; True if it got there."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            idle = not (self._journal_busy or self._writer_busy)
            if idle and not self._queue and not self._journaled:
                return True
            self.journal_now()
            time.sleep(0.005)
        return False

    def _spool_stragglers(self) -> None:
        records = []
        while self._queue:
            records.append(self._queue.popleft())
        batch = self._rows(records)
        if len(batch):
            self._spool(batch)
        self._count("journaled", len(records))

    def _count(self, outcome: str, records: int) -> None:
        # Three threads update the counters; `+=` on an attribute is not atomic.
        with self._stats_lock:
            setattr(self.stats, outcome, getattr(self.stats, outcome) + records)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def _journal_loop(self) -> None:
        interval = self.config.flush_interval_ms / 1000
        while True:
            # No timer while the queue is empty: the first record wakes this thread, which then
            # gives it the interval to gather company (one fsync and one transaction for all).
            self._wake.wait()
            self._hurry.wait(interval)
            # Cleared before the queue is read: a record queued from here on wakes the next pass.
            self._hurry.clear()
            self._wake.clear()
            self._journal_busy = True
            try:
                self._journal_queued()
            finally:
                self._journal_busy = False
            if self._stopping and not self._queue:
                self._journal_done = True
                self._writer_wake.set()
                return

    def _journal_queued(self) -> None:
        while self._queue:
            records: list[CallRecord] = []
            while self._queue and len(records) < self.config.batch_size:
                records.append(self._queue.popleft())
            batch = self._rows(records)
            if not len(batch):
                self._count("journaled", len(records))
                continue
            with self._hand_lock:
                try:
                    path: Path | None = self.spool.write(batch)
                except SpoolFullError as full:
                    log.warning("%s; the batch goes to the database unjournaled", full)
                    path = None
                except (OSError, TypeError):
                    log.exception("journal write failed; the batch goes to the database as is")
                    path = None
                if path is not None:
                    self._in_hand.add(path)
                keep = path is None or len(self._journaled) < MAX_BATCHES_IN_MEMORY
                self._journaled.append((path, batch if keep else None))
            self._count("journaled", len(records))
            self._writer_wake.set()

    def _write_loop(self) -> None:
        interval = self.config.flush_interval_ms / 1000
        while True:
            # Timed only while there is something to retry: the database is away or spooled
            # batches wait; otherwise the journal thread (or an adopted spool) wakes it.
            idle = self.stats.database_up and not self._spool_has_batches
            self._writer_wake.wait(None if idle else interval)
            self._writer_wake.clear()
            self._writer_busy = True
            try:
                self._write_journaled()
                self._maybe_replay()
            finally:
                self._writer_busy = False
            if self._journal_done and not self._journaled:
                return

    def _write_journaled(self) -> None:
        while self._journaled:
            path, batch = self._journaled.popleft()
            if batch is None and path is not None:
                batch = self._read(path)
            if batch is None:
                continue
            trying = self.stats.database_up or time.monotonic() >= self._next_retry
            if trying and self._write(batch):
                self._count("written", len(batch))
                if path is not None:
                    self.spool.remove(path)
            elif path is None:
                self._spool(batch)
            else:
                # Already on disk: it waits there for the database.
                self._count("spooled", len(batch))
                self._spool_has_batches = True
            if path is not None:
                with self._hand_lock:
                    self._in_hand.discard(path)

    def _rows(self, records: list[CallRecord]) -> RowBatch:
        batch = RowBatch()
        for record in records:
            try:
                rows = build_rows([record], self.policy, self.config.logprob_form, self.v3)
            except Exception:
                # One malformed record must not take its batch down with it.
                self._count("dropped", 1)
                log.exception("call record %s could not be converted; dropped", record.id)
                continue
            if self.observer is not None:
                self.observer(record, rows.calls[0])
            batch.extend(rows)
            # Hand the GIL to the event loop between records: otherwise a big batch keeps it
            # waiting a switch interval (5 ms) at every turn, and calls stall behind the sink.
            time.sleep(0)
        return self.fitter.fit(batch)

    def _insert(self, batch: RowBatch) -> None:
        try:
            self._insert_once(batch)
        except DBAPIError as error:
            # A pooled connection the server dropped (a restart, an idle timeout): the pool has
            # thrown it and its siblings away, so one more try is on a fresh connection.
            if not error.connection_invalidated:
                raise
            self._insert_once(batch)

    def _insert_once(self, batch: RowBatch) -> None:
        with self.engine.begin() as connection:
            slots = days_of(batch) - self._slots_ready
            if slots:
                ensure_day_partitions(connection, slots)
            write_batch(connection, batch)
            mark_late_calls(connection, batch, datetime.now(UTC))
        self._slots_ready |= days_of(batch)

    def _answers(self) -> bool:
        try:
            with self.engine.connect() as connection:
                database_answers(connection)
        except (SQLAlchemyError, OSError):
            return False
        return True

    def _outage(self, error: Exception) -> bool:
        self.stats.failed_batches += 1
        if self.stats.database_up:
            log.warning("database unreachable, spooling call records: %s", error)
        self.stats.database_up = False
        self._next_retry = time.monotonic() + RETRY_INTERVAL_S
        self._changed()
        return False

    def _write(self, batch: RowBatch) -> bool:
        """Write a batch; False (it stays spooled) only when the database is away."""
        started = time.perf_counter()
        try:
            self._insert(batch)
        except (SQLAlchemyError, OSError) as error:
            # The retention job may have dropped a partition this process made earlier.
            self._slots_ready.clear()
            # A missing schema or a lost connection is an outage; only values are quarantined.
            if not refused_for_content(error) or not self._answers():
                return self._outage(error)
            self.stats.failed_batches += 1
            log.error(
                "the database refused a batch of %d calls (%s); writing it call by call",
                len(batch),
                type(error).__name__,
            )
            if not self._write_call_by_call(batch):
                return False
        if not self.stats.database_up:
            log.info("database is back; replaying the spool")
        self.stats.database_up = True
        self.stats.last_batch_seconds = time.perf_counter() - started
        self._changed()
        return True

    def _write_call_by_call(self, batch: RowBatch) -> bool:
        """Each call's rows in their own transaction, then row by row; refused rows quarantined.

        False when the database went away meanwhile: the file stays, the calls written so far
        are skipped when it is replayed, and the rows refused so far are refused again then.
        """
        refused = RowBatch()
        for rows in rows_by_call(batch):
            try:
                self._insert(rows)
                continue
            except (SQLAlchemyError, OSError) as error:
                self._slots_ready.clear()
                if not refused_for_content(error) or not self._answers():
                    return self._outage(error)
            for row in single_rows(rows):
                try:
                    self._insert(row)
                except (SQLAlchemyError, OSError) as error:
                    self._slots_ready.clear()
                    if not refused_for_content(error) or not self._answers():
                        return self._outage(error)
                    log.error(
                        "a row of call %s was refused (%s)", call_id(row), type(error).__name__
                    )
                    refused.extend(row)
        self._park(refused)
        return True

    def _park(self, refused: RowBatch) -> None:
        """Quarantine refused rows: counted, logged, out of the replay."""
        count = row_count(refused)
        if not count:
            return
        try:
            path = self.spool.quarantine(refused)
        except (OSError, TypeError):
            log.exception("quarantine write failed; %d refused rows lost", count)
            self._count("dropped", len(refused))
            return
        self._count("quarantined", count)
        log.error("%d rows the database refused are quarantined in %s", count, path)

    def _spool(self, batch: RowBatch) -> None:
        try:
            self.spool.write(batch)
            self._spool_has_batches = True
            self._writer_wake.set()
            self._count("spooled", len(batch))
        except SpoolFullError as full:
            self._count("dropped", len(batch))
            log.error("%s; %d call records dropped", full, len(batch))
        except (OSError, TypeError):
            self._count("dropped", len(batch))
            log.exception("spool write failed; %d call records lost", len(batch))

    def _read(self, path: Path) -> RowBatch | None:
        try:
            return self.fitter.fit(self.spool.read(path))
        except (OSError, ValueError, KeyError, TypeError):
            log.exception("spool file %s is unreadable; set aside", path)
            self.spool.set_aside(path)
            return None

    def _maybe_replay(self) -> None:
        if not self._spool_has_batches:
            return
        if not self.stats.database_up and time.monotonic() < self._next_retry:
            return
        # Cleared first so a batch spooled meanwhile raises it again.
        self._spool_has_batches = False
        with self._hand_lock:
            paths = [p for p in self.spool.pending_files() if p not in self._in_hand]
        for path in paths:
            batch = self._read(path)
            if batch is None:
                continue
            if not self._write(batch):
                self._spool_has_batches = True
                return
            self.spool.remove(path)
            self._count("replayed", len(batch))
