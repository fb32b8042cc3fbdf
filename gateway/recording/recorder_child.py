"""`python -m gateway.recording.recorder_child FD`: the log sink, run beside a gateway process.

The gateway hands raw call records over a socket (`FD`, inherited); this process builds the rows,
journals and writes them with a `LogSink`, and reports back its counters, which records it has
journaled and what the gateway's metrics need of each call. It stops when told to, or when the
gateway's end of the socket closes (the gateway died): then it journals and writes what it has.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import uuid
from collections import deque
from dataclasses import asdict
from multiprocessing.connection import Connection
from typing import Any

from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.otlp_metrics.exporter import MetricExporter
from gateway.otlp_metrics.settings import metric_export_settings
from gateway.recording.calls_repository import commit_without_waiting_for_wal
from gateway.recording.observation import CallObservation
from gateway.recording.recorder_messages import Flush, Hello, RecordBatch, Report
from gateway.recording.sink import LogSink
from gateway.recording.spool_adoption import OrphanSpools, adopt_orphans
from gateway.recording.spool_lock import SpoolLock
from gateway.tracing.exporter import SpanExporter
from plumbline.db import create_db_engine
from plumbline.otlp.settings import trace_export_settings

log = logging.getLogger(__name__)
# How often a recorder looks for spools no live recorder owns (see spool_adoption).
ADOPT_INTERVAL_S = 5.0
# How long a change waits for the next ones to share its report (less if the interval is).
REPORT_GATHER_S = 0.05


class Recorder:
    """One LogSink fed from the gateway's socket, reporting back when something changed."""

    def __init__(self, connection: Connection, hello: Hello) -> None:
        self.connection = connection
        self.config = RecordingConfig.model_validate_json(hello.config_json)
        self.engine = create_db_engine(hello.database_url, pool_size=hello.pool_size, writer=True)
        if not self.config.synchronous_commit:
            commit_without_waiting_for_wal(self.engine)
        self.observations: deque[CallObservation] = deque()
        # Set when the sink's counters moved or a call was observed: the reporter's cue.
        self._changed = threading.Event()
        self.sink = LogSink(
            self.engine, self.config, observer=self._observe, on_change=self._changed.set
        )
        self.orphans: OrphanSpools | None = hello.orphans
        self.spool_lock = SpoolLock(self.config.spool_dir)
        self._send_lock = threading.Lock()
        self._done = threading.Event()
        # The gateway checked these variables at its start-up; this process inherits them.
        self.spans: SpanExporter | None = None
        self.metrics: MetricExporter | None = None
        # Rows never depend on an exporter: one that cannot be built is logged and left out.
        try:
            self._build_exporters()
        except Exception:
            log.exception("trace or metric export is off in this recorder: it could not start")

    def _build_exporters(self) -> None:
        settings = trace_export_settings(os.environ)
        # Spans and metrics of this process name the same instance.
        instance = str(uuid.uuid4())
        if settings.enabled:
            self.spans = SpanExporter(settings, policy=self.sink.policy, instance_id=instance)
        metrics = metric_export_settings(os.environ)
        if metrics.otlp:
            self.metrics = MetricExporter(metrics, instance_id=instance)

    def _observe(self, record: CallRecord, row: dict[str, Any]) -> None:
        self.observations.append(CallObservation.of(record, row))
        self._changed.set()
        if self.spans is not None:
            self.spans.offer(record, row)
        if self.metrics is not None:
            self.metrics.offer(record, row)

    def run(self) -> None:
        """Take records until told to stop or the gateway goes away, then drain and report."""
        # Before any work: the rows of a backlog are built at this priority too.
        if self.config.recorder_nice:
            os.nice(self.config.recorder_nice)
        # A predecessor still draining this spool (its worker was killed) finishes first, so no
        # file is replayed by two recorders at once.
        if not self.spool_lock.acquire(wait=False):
            log.warning("waiting for the previous recorder of %s to finish", self.config.spool_dir)
            self.spool_lock.acquire(wait=True)
        self._adopt()
        self.sink.start()
        if self.spans is not None:
            self.spans.start()
        if self.metrics is not None:
            self.metrics.start()
        reporter = threading.Thread(target=self._report_loop, name="plumbline-recorder-report")
        reporter.start()
        adopter = threading.Thread(
            target=self._adopt_loop, name="plumbline-recorder-adopt", daemon=True
        )
        adopter.start()
        try:
            self._receive()
        finally:
            try:
                self.sink.stop()
            finally:
                # An exporter that fails to stop must not keep the reporter, and so the
                # process, alive: the gateway would wait on it and then leave it running.
                try:
                    self._stop_exporters()
                finally:
                    self._done.set()
                    self._changed.set()
                    reporter.join()
                    self._report(final=True)
                    self.engine.dispose()

    def _stop_exporters(self) -> None:
        # Side by side: with a hung collector each waits out its request and final pass.
        stoppers = [
            threading.Thread(target=exporter.stop, name="plumbline-exporter-stop")
            for exporter in (self.spans, self.metrics)
            if exporter is not None
        ]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join()

    def _receive(self) -> None:
        while True:
            try:
                message = self.connection.recv()
            except (EOFError, OSError):
                log.warning("the gateway went away; writing the records already received")
                return
            if isinstance(message, RecordBatch):
                for record in message.records:
                    self.sink.submit(record)
                # The gateway already waited its flush interval to make this batch.
                self.sink.journal_now()
            elif isinstance(message, Flush):
                self._report(flushed=self.sink.flush(timeout=message.timeout_s))
            elif message == "stop":
                return

    def _adopt(self) -> None:
        if self.orphans is None:
            return
        try:
            if adopt_orphans(self.orphans, self.config.spool_dir):
                self.sink.notice_spooled()
        except OSError:
            log.exception("could not adopt the spools of %s", self.orphans.root)

    def _adopt_loop(self) -> None:
        while not self._done.wait(ADOPT_INTERVAL_S):
            self._adopt()

    def _report_loop(self) -> None:
        interval = min(self.config.flush_interval_ms / 1000, REPORT_GATHER_S)
        # Exporters count in threads of their own, which do not cue a report: with one on,
        # the counters are sent every interval, as they always were.
        ticking = self.spans is not None or self.metrics is not None
        while True:
            if not ticking:
                self._changed.wait()
            # The changes of the next moment join this one in one report (a busy sink's
            # batches, a write right after its journal).
            if self._done.wait(interval):
                return
            # Cleared before the report is built: what changes from here on is sent next.
            self._changed.clear()
            self._report()

    def _report(self, *, flushed: bool | None = None, final: bool = False) -> None:
        observations = []
        while self.observations:
            observations.append(self.observations.popleft())
        stats = asdict(self.sink.stats) | (self.spans.counts() if self.spans else {})
        report = Report(
            stats=stats | (self.metrics.counts() if self.metrics else {}),
            queue_depth=self.sink.queue_depth,
            spooled_files=self.sink.spooled_files(),
            observations=observations,
            flushed=flushed,
            final=final,
        )
        try:
            with self._send_lock:
                self.connection.send(report)
        except OSError:
            # The gateway is gone; what matters now is that the rows reach the database.
            pass


def main(argv: list[str]) -> None:
    """Entry point: adopt the inherited socket, read the hello, run until stopped."""
    # The gateway decides when the recorder stops (after its own drain), not the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    connection = Connection(socket.socket(fileno=int(argv[0])).detach())
    hello = connection.recv()
    if not isinstance(hello, Hello):
        raise SystemExit("recorder: expected a hello from the gateway first")
    logging.basicConfig(level=hello.log_level, format="%(levelname)s recorder: %(message)s")
    Recorder(connection, hello).run()


if __name__ == "__main__":
    main(sys.argv[1:])
