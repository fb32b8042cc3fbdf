"""The sink and the recorder sleep without a timer: what must not wait for one still goes at once.

Each case sets `flush_interval_ms` to an hour, so a record that only a timer would move would
sit for an hour and the test's deadline would fail it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.config import RecordingConfig
from gateway.recording.recorder_process import RecorderProcess
from gateway.recording.sink import LogSink
from plumbline.db import create_db_engine
from plumbline.models import Call
from tests.support.databases import count_rows, postgres_database
from tests.support.records import make_record
from tests.support.waiting import wait_until

HOUR_MS = 3_600_000.0


@pytest.fixture
def database_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _config(spool: Path, **fields: object) -> RecordingConfig:
    return RecordingConfig(flush_interval_ms=HOUR_MS, spool_dir=spool, **fields)


def _rows_reach(url: str, count: int) -> None:
    wait_until(lambda: count_rows(url, Call) == count, timeout=30, what=f"{count} call rows")


def test_a_flush_does_not_wait_out_the_interval(database_url: str, tmp_path: Path) -> None:
    sink = LogSink(create_db_engine(database_url), _config(tmp_path / "spool"))
    sink.start()
    try:
        sink.submit(make_record(tokens=3))
        assert sink.flush(timeout=30)
        assert count_rows(database_url, Call) == 1
    finally:
        sink.stop()


def test_a_full_batch_is_journaled_and_written_at_once(database_url: str, tmp_path: Path) -> None:
    sink = LogSink(create_db_engine(database_url), _config(tmp_path / "spool", batch_size=4))
    sink.start()
    try:
        for _ in range(4):
            sink.submit(make_record(tokens=3))
        _rows_reach(database_url, 4)
    finally:
        sink.stop()


def test_stop_writes_a_record_still_waiting_for_company(database_url: str, tmp_path: Path) -> None:
    sink = LogSink(create_db_engine(database_url), _config(tmp_path / "spool"))
    sink.start()
    sink.submit(make_record(tokens=3))
    sink.stop()
    assert count_rows(database_url, Call) == 1


def test_the_recorder_sends_a_full_batch_and_reports_it_unasked(
    database_url: str, tmp_path: Path
) -> None:
    recorder = RecorderProcess(database_url, 2, _config(tmp_path / "spool", batch_size=3))
    recorder.start()
    try:
        for _ in range(3):
            recorder.submit(make_record(tokens=3))
        _rows_reach(database_url, 3)
        # No flush was asked: the recorder's report came because its counters moved.
        wait_until(lambda: recorder.stats.written == 3, timeout=30, what="a report of 3 written")
        assert recorder.queue_depth == 0
    finally:
        recorder.stop()


def test_the_recorder_runs_at_its_configured_niceness(database_url: str, tmp_path: Path) -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    recorder = RecorderProcess(database_url, 2, _config(tmp_path / "spool", recorder_nice=7))
    recorder.start()
    try:
        recorder.submit(make_record(tokens=3))
        # Answered by the recorder's receive loop, which starts after the niceness is set.
        assert recorder.flush(timeout=30)
        assert recorder.pid is not None
        assert os.getpriority(os.PRIO_PROCESS, recorder.pid) == min(19, ours + 7)
    finally:
        recorder.stop()
    assert count_rows(database_url, Call) == 1


def test_a_recorder_at_the_lowest_priority_still_drains_a_backlog(
    database_url: str, tmp_path: Path
) -> None:
    config = _config(tmp_path / "spool", recorder_nice=19, batch_size=50)
    recorder = RecorderProcess(database_url, 2, config)
    recorder.start()
    try:
        for _ in range(400):
            recorder.submit(make_record(tokens=10))
        assert recorder.flush(timeout=60)
    finally:
        recorder.stop()
    assert count_rows(database_url, Call) == 400
    assert recorder.stats.dropped == 0
