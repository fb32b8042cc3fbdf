"""The log sink journals records to disk before (and whether or not) the database answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.config import RecordingConfig
from gateway.recording.sink import LogSink
from plumbline.db import create_db_engine
from tests.support.databases import sqlite_database
from tests.support.records import make_record
from tests.support.waiting import wait_until


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word (a hung database)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def _journaled_records(sink: LogSink) -> int:
    return sum(len(sink.spool.read(path)) for path in sink.spool.pending_files())


def test_records_reach_the_journal_while_the_database_hangs(
    silent_server: int, tmp_path: Path
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{silent_server}/plumbline"
    config = RecordingConfig(flush_interval_ms=20, spool_dir=tmp_path / "spool")
    sink = LogSink(create_db_engine(url), config)
    sink.start()
    try:
        for _ in range(50):
            sink.submit(make_record(tokens=5))
        wait_until(lambda: _journaled_records(sink) >= 50, timeout=3, what="50 records", poll=0.01)
        # On disk while the writer still waits for the database's first word.
        assert _journaled_records(sink) == 50
        assert sink.stats.written == 0 and sink.queue_depth == 0
    finally:
        sink.stop()
    # The connection attempt timed out: the batches stay in the spool for a later replay.
    assert sink.stats.spooled == 50 and sink.stats.dropped == 0
    assert sink.spooled_files() == len(sink.spool.pending_files()) >= 1
    sink.engine.dispose()


def test_a_written_batch_leaves_no_journal_file(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        config = RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "spool")
        sink = LogSink(create_db_engine(url), config)
        sink.start()
        for _ in range(30):
            sink.submit(make_record(tokens=5))
        assert sink.flush()
        sink.stop()
        sink.engine.dispose()
    assert sink.stats.written == 30 and sink.stats.spooled == 0
    assert sink.spool.pending_files() == []
