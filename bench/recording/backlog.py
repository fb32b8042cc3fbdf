"""A backlog spooled while the database was away, and how long the sink takes to replay it."""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gateway.config import RecordingConfig
from gateway.metering.record import CallRecord
from gateway.recording.sink import LogSink
from plumbline.db import create_db_engine

# Nothing listens on port 1: every write fails at once, as with a database that is down.
DOWN_URL = "postgresql://postgres@127.0.0.1:1/plumbline_down"


@dataclass(frozen=True)
class Spooled:
    """What the outage left on disk."""

    records: int
    files: int
    bytes: int
    seconds: float


@dataclass(frozen=True)
class Replay:
    """Seconds until the spool was empty; live records written meanwhile and in all."""

    seconds: float
    replayed: int
    live_submitted: int = 0
    live_written_during: int = 0
    seconds_until_live_written: float = 0.0


def spool_backlog(records: list[CallRecord], spool_dir: Path) -> Spooled:
    """Submit the records to a sink whose database is down; they all end up in the spool."""
    engine = create_db_engine(DOWN_URL)
    sink = LogSink(engine, RecordingConfig(spool_dir=spool_dir, queue_capacity=len(records) + 1))
    sink.start()
    started = time.perf_counter()
    try:
        for record in records:
            sink.submit(record)
        if not sink.flush(timeout=3600):
            raise RuntimeError("the sink did not spool the backlog within an hour")
    finally:
        sink.stop()
        engine.dispose()
    files = sorted(spool_dir.glob("*.jsonl"))
    return Spooled(
        len(records),
        len(files),
        sum(p.stat().st_size for p in files),
        time.perf_counter() - started,
    )


def copy_spool(source: Path, target: Path) -> None:
    """A second copy of a spooled backlog, for a second replay."""
    shutil.copytree(source, target)


def replay(url: str, spool_dir: Path, backlog: int, live: list[CallRecord], rate: float) -> Replay:
    """Start a sink on the returned database; live records keep arriving at `rate` meanwhile."""
    engine = create_db_engine(url)
    sink = LogSink(engine, RecordingConfig(spool_dir=spool_dir))
    stop = threading.Event()
    feeder = threading.Thread(target=_feed, args=(sink, live, rate, stop), daemon=True)
    started = time.perf_counter()
    sink.start()
    feeder.start()
    try:
        while sink.stats.replayed < backlog:
            if time.perf_counter() - started > 3600:
                raise RuntimeError("the backlog was not replayed within an hour")
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        live_during = sink.stats.written
        stop.set()
        feeder.join()
        submitted = sink.stats.submitted
        if not sink.flush(timeout=3600):
            raise RuntimeError("live records were not written within an hour")
        return Replay(
            seconds,
            sink.stats.replayed,
            submitted,
            live_during,
            time.perf_counter() - started,
        )
    finally:
        stop.set()
        sink.stop()
        engine.dispose()


def _feed(sink: LogSink, live: list[CallRecord], rate: float, stop: threading.Event) -> None:
    if not live or rate <= 0:
        return
    began = time.perf_counter()
    for index, record in enumerate(live):
        if stop.is_set():
            return
        delay = began + index / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sink.submit(record)
