"""How fast the LogSink, driven in-process, gets a burst of records into Postgres."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.harness.procstat import cpu_seconds
from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.recording.call_sink import CallSink
from gateway.recording.logprob_rows import LogprobForm
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.logprob_vocab import Vocabulary
from gateway.recording.recorder_process import RecorderProcess
from gateway.recording.rows import build_rows
from gateway.recording.sink import LogSink
from gateway.recording.sink_stats import SinkStats
from plumbline.db import create_db_engine


@dataclass(frozen=True)
class SinkRun:
    """One burst: records, wall seconds until all were written, CPU of this process and PG."""

    records: int
    seconds: float
    process_cpu_s: float
    postgres_cpu_s: float
    written: int
    # CPU of the recorder process when the sink runs in one (None: in this process).
    recorder_cpu_s: float | None = None

    @property
    def per_second(self) -> float:
        """Records written per second."""
        return self.records / self.seconds


def _backend_pids(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return [int(row[0]) for row in rows]


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            continue
    return total


def sink_burst(
    url: str,
    warm: list[CallRecord],
    records: list[CallRecord],
    *,
    recorder: bool = False,
    form: LogprobForm = "v1",
) -> SinkRun:
    """Write `warm`, then time `records` submitted at once (`recorder`: as the gateway does)."""
    engine = create_db_engine(url)
    spool = Path(tempfile.mkdtemp(prefix="plumbline-bench-spool-"))
    config = RecordingConfig(
        spool_dir=spool, queue_capacity=max(100_000, len(records) + 1), logprob_form=form
    )
    sink: CallSink = RecorderProcess(url, 5, config) if recorder else LogSink(engine, config)
    sink.start()
    try:
        for record in warm:
            sink.submit(record)
        if not sink.flush(timeout=300):
            raise RuntimeError("the sink did not write the warm-up records")
        backends = _backend_pids(url)
        child = sink.pid if isinstance(sink, RecorderProcess) else None
        child_before = cpu_seconds(child) if child else 0.0
        before, pg_before = time.process_time(), _cpu(backends)
        started = time.perf_counter()
        for record in records:
            sink.submit(record)
        if not sink.flush(timeout=3600):
            raise RuntimeError("the sink did not catch up within an hour")
        seconds = time.perf_counter() - started
        run = SinkRun(
            len(records),
            seconds,
            time.process_time() - before,
            _cpu(backends) - pg_before,
            sink.stats.written - len(warm),
            cpu_seconds(child) - child_before if child else None,
        )
    finally:
        sink.stop()
        engine.dispose()
    return run


@contextmanager
def v3_rows(url: str) -> Iterator[V3Rows]:
    """The v3 row builder a sink on this database has (its vocabulary and counters)."""
    engine = create_db_engine(url)
    try:
        yield V3Rows(Vocabulary(engine, RecordingConfig().logprob_vocab), SinkStats())
    finally:
        engine.dispose()


def row_building_seconds(
    records: list[CallRecord], form: LogprobForm = "v1", v3: V3Rows | None = None
) -> float:
    """CPU seconds this process spends turning these records into rows, measured alone."""
    started = time.process_time()
    build_rows(records, form=form, v3=v3)
    return time.process_time() - started
