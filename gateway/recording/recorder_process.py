"""RecorderProcess: the gateway's end of a log sink that runs in a child process.

Building a call's rows (logprob summary, redaction, compression) and writing them takes about a
millisecond of CPU per 200-token record, and in the gateway's own process every bit of it is
taken from the event loop through the GIL. So the hot path only appends the raw record to a
deque; a hand-off thread sends batches to the recorder (`recorder_child`) over a socket, and a
listener thread applies what the recorder reports (counters, the calls for the metrics). Batches
are kept until the recorder reports them journaled: if it dies, another is started and they are
sent again (a call the database already has is ignored), so nothing is lost with it.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.recording.observation import CallObservation
from gateway.recording.recorder_messages import Flush, Hello, RecordBatch, Report
from gateway.recording.sink_stats import LOGPROB_FALLBACK_COUNTERS, SinkStats
from gateway.recording.spool_adoption import OrphanSpools

log = logging.getLogger(__name__)
COUNTERS = (
    "journaled",
    "written",
    "spooled",
    "replayed",
    "dropped",
    "failed_batches",
    "quarantined",
    "trace_exported",
    "trace_dropped_queue_full",
    "trace_dropped_export_failed",
    "trace_dropped_unbuildable",
    "metric_exported",
    "metric_export_failed",
    "metric_overflowed",
    *LOGPROB_FALLBACK_COUNTERS,
)
# How long `stop` waits for the recorder to write what it holds before leaving it to finish.
STOP_WAIT_S = 60.0
DROP_LOG_INTERVAL_S = 10.0
CallObserver = Callable[[CallObservation], None]


@dataclass(eq=False)
class _Child:
    """One recorder process, the socket to it and what it last reported."""

    process: subprocess.Popen[bytes]
    connection: Connection
    # Records sent to this child so far; its reports say how many of them it journaled.
    sent: int = 0
    report: Report | None = None
    gone: bool = False
    listener: threading.Thread | None = None
    counters: dict[str, int] = field(default_factory=dict)


class RecorderProcess:
    """Accepts records from the event loop and ships them to a recorder process in batches."""

    def __init__(
        self,
        database_url: str,
        pool_size: int,
        config: RecordingConfig,
        observer: CallObserver | None = None,
        orphans: OrphanSpools | None = None,
    ) -> None:
        self.config = config
        self.observer = observer
        self._hello = Hello(
            database_url=database_url,
            pool_size=pool_size,
            config_json=config.model_dump_json(),
            log_level=logging.getLogger().getEffectiveLevel(),
            orphans=orphans,
        )
        self._queue: deque[CallRecord] = deque()
        # Sent batches the recorder has not reported journaled: (child's count after it, records).
        self._unacked: deque[tuple[int, list[CallRecord]]] = deque()
        # Held while sending (hand-off, flush, restart); never by the listener, which must keep
        # reading or a recorder blocked on its reports could stop reading our batches.
        self._lock = threading.Lock()
        self._acks = threading.Lock()
        # `_wake`: records are queued (set by the first since the last hand-off); `_hurry`: send
        # without waiting out the interval for more (a full batch, the recorder gone, stop).
        self._wake = threading.Event()
        self._hurry = threading.Event()
        self._flushed = threading.Event()
        self._flush_result = False
        self._child: _Child | None = None
        self._handoff: threading.Thread | None = None
        self._stopping = False
        self._submitted = 0
        self._dropped = 0
        self._last_drop_log = 0.0
        # Counters of recorders that exited, so the totals survive a restart.
        self._retired: dict[str, int] = dict.fromkeys(COUNTERS, 0)

    @property
    def stats(self) -> SinkStats:
        """The sink's counters: this process's, plus every recorder's since the gateway started."""
        child = self._child
        report = child.report if child is not None else None
        current: dict[str, Any] = report.stats if report is not None else {}
        totals = {name: self._retired[name] + int(current.get(name, 0)) for name in COUNTERS}
        totals["dropped"] += self._dropped
        return SinkStats(
            submitted=self._submitted,
            database_up=bool(current.get("database_up", True)),
            last_batch_seconds=float(current.get("last_batch_seconds", 0.0)),
            **totals,
        )

    @property
    def queue_depth(self) -> int:
        """Records not yet journaled: waiting here or in the recorder's queue."""
        child = self._child
        waiting = child.report.queue_depth if child is not None and child.report else 0
        return len(self._queue) + waiting

    @property
    def pid(self) -> int | None:
        """The recorder process's id, while one runs."""
        child = self._child
        return child.process.pid if child is not None else None

    def spooled_files(self) -> int:
        """Spooled batches waiting for the database, as the recorder last counted them."""
        child = self._child
        return child.report.spooled_files if child is not None and child.report else 0

    def start(self) -> None:
        """Start the recorder process and the hand-off thread."""
        self._child = self._spawn()
        self._handoff = threading.Thread(
            target=self._handoff_loop, name="plumbline-recorder-handoff", daemon=True
        )
        self._handoff.start()

    def submit(self, record: CallRecord) -> None:
        """Queue a record for the recorder; never blocks."""
        self._submitted += 1
        if len(self._queue) >= self.config.queue_capacity:
            self._drop(1)
            return
        self._queue.append(record)
        if len(self._queue) >= self.config.batch_size:
            self._hurry_handoff()
        elif not self._wake.is_set():
            self._wake.set()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted so far is written; True if it got there in time."""
        deadline = time.monotonic() + timeout
        self._flushed.clear()
        with self._lock:
            self._send_queued()
            child = self._child
            if child is None or child.gone:
                return False
            try:
                child.connection.send(Flush(max(0.0, deadline - time.monotonic())))
            except OSError:
                return False
        if not self._flushed.wait(max(0.0, deadline - time.monotonic())):
            return False
        return self._flush_result

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Send what is queued, let the recorder write everything, and wait for it to exit."""
        self._stopping = True
        self._hurry_handoff()
        if self._handoff is not None:
            self._handoff.join(timeout)

    def _hurry_handoff(self) -> None:
        self._hurry.set()
        self._wake.set()

    def _drop(self, records: int) -> None:
        self._dropped += records
        now = time.monotonic()
        if now - self._last_drop_log >= DROP_LOG_INTERVAL_S:
            self._last_drop_log = now
            log.error(
                "the recorder is %d records behind (recording.queue_capacity); "
                "%d call records dropped so far",
                len(self._queue),
                self._dropped,
            )

    def _spawn(self) -> _Child:
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "gateway.recording.recorder_child", str(theirs.fileno())]
        # Its own session: a Ctrl-C meant for the gateway must not stop the recorder before
        # the gateway has drained its calls into it.
        process = subprocess.Popen(command, pass_fds=[theirs.fileno()], start_new_session=True)
        theirs.close()
        child = _Child(process, Connection(ours.detach()))
        child.connection.send(self._hello)
        child.listener = threading.Thread(
            target=self._listen, args=(child,), name="plumbline-recorder-listener", daemon=True
        )
        child.listener.start()
        return child

    def _handoff_loop(self) -> None:
        interval = self.config.flush_interval_ms / 1000
        while True:
            # No timer while nothing is queued: the first record (or the recorder's exit) wakes
            # this thread, which then waits the interval for company unless hurried.
            self._wake.wait()
            self._hurry.wait(interval)
            # Cleared before the queue is read: a record queued from here on wakes the next pass.
            self._hurry.clear()
            self._wake.clear()
            with self._lock:
                child = self._child
                if child is not None and (child.gone or child.process.poll() is not None):
                    self._restart(child)
                self._send_queued()
            if self._stopping and not self._queue:
                self._finish()
                return

    def _send_queued(self) -> None:
        """Send the queued records in batches (the caller holds the lock)."""
        child = self._child
        while self._queue and child is not None and not child.gone:
            records: list[CallRecord] = []
            while self._queue and len(records) < self.config.batch_size:
                records.append(self._queue.popleft())
            child.sent += len(records)
            with self._acks:
                self._unacked.append((child.sent, records))
            try:
                child.connection.send(RecordBatch(records))
            except OSError:
                # Kept in `_unacked`: the next recorder gets them.
                child.gone = True

    def _restart(self, child: _Child) -> None:
        """Replace a recorder that exited, and send it what the old one had not journaled."""
        child.connection.close()
        try:
            code = child.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            # Its socket broke but it still runs: it would never hear from us again.
            child.process.kill()
            code = child.process.wait()
        if child.listener is not None:
            child.listener.join(5.0)
        for name in COUNTERS:
            self._retired[name] += child.counters.get(name, 0)
        with self._acks:
            pending = [record for _, batch in self._unacked for record in batch]
            self._unacked.clear()
        log.error(
            "the recorder process exited (code %s); starting another and resending the %d "
            "records it had not journaled",
            code,
            len(pending),
        )
        self._child = self._spawn()
        self._queue.extendleft(reversed(pending))

    def _finish(self) -> None:
        child = self._child
        if child is None:
            return
        try:
            child.connection.send("stop")
        except OSError:
            pass
        try:
            child.process.wait(STOP_WAIT_S)
            child.connection.close()
        except subprocess.TimeoutExpired:
            log.error(
                "the recorder is still writing after %.0f s; leaving it to finish", STOP_WAIT_S
            )
            return
        if child.listener is not None:
            child.listener.join(5.0)
        if self._unacked:
            lost = sum(len(batch) for _, batch in self._unacked)
            log.error("the recorder exited without journaling %d call records", lost)
            self._drop(lost)
            self._unacked.clear()

    def _listen(self, child: _Child) -> None:
        while True:
            try:
                report = child.connection.recv()
            except (EOFError, OSError, TypeError):
                # TypeError: the connection was closed under us (a restart or the shutdown).
                child.gone = True
                self._hurry_handoff()
                return
            if isinstance(report, Report):
                self._apply(child, report)

    def _apply(self, child: _Child, report: Report) -> None:
        child.report = report
        child.counters = {name: int(report.stats.get(name, 0)) for name in COUNTERS}
        journaled = child.counters["journaled"]
        with self._acks:
            if child is self._child:
                while self._unacked and self._unacked[0][0] <= journaled:
                    self._unacked.popleft()
        if self.observer is not None:
            for observation in report.observations:
                try:
                    self.observer(observation)
                except Exception:
                    log.exception("metrics observer failed on a recorded call")
        if report.flushed is not None:
            self._flush_result = report.flushed
            self._flushed.set()
