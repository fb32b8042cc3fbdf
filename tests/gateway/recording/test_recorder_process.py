"""The recorder process: records cross to it, survive its death, and are written when we die."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.config import RecordingConfig
from gateway.recording.observation import CallObservation
from gateway.recording.recorder_process import RecorderProcess
from plumbline.models import Call, CallLogprobs
from tests.support.databases import count_rows, postgres_database
from tests.support.records import make_record
from tests.support.waiting import wait_until


@pytest.fixture
def database_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    wait_until(condition, timeout=timeout, what="the recorder's condition", poll=0.02)


def _recorder(url: str, spool: Path, seen: list[CallObservation]) -> RecorderProcess:
    config = RecordingConfig(flush_interval_ms=20, batch_size=50, spool_dir=spool)
    recorder = RecorderProcess(url, 2, config, observer=seen.append)
    recorder.start()
    return recorder


def test_records_are_written_by_the_recorder_and_observed_here(
    database_url: str, tmp_path: Path
) -> None:
    seen: list[CallObservation] = []
    recorder = _recorder(database_url, tmp_path / "spool", seen)
    records = [make_record(tokens=20) for _ in range(120)]
    for record in records:
        recorder.submit(record)
    assert recorder.flush(timeout=30)
    recorder.stop()
    assert count_rows(database_url, Call) == 120
    assert count_rows(database_url, CallLogprobs) == 120
    stats = recorder.stats
    assert (stats.submitted, stats.written, stats.dropped) == (120, 120, 0)
    assert sorted(o.completion_tokens or 0 for o in seen) == [20] * 120
    assert {o.team for o in seen} == {records[0].team_name}
    assert recorder.queue_depth == 0


def test_a_killed_recorder_is_replaced_and_nothing_is_lost(
    database_url: str, tmp_path: Path
) -> None:
    recorder = _recorder(database_url, tmp_path / "spool", [])
    try:
        for _ in range(100):
            recorder.submit(make_record(tokens=5))
        assert recorder.flush(timeout=30)
        first = recorder._child
        assert first is not None
        os.kill(first.process.pid, signal.SIGKILL)
        # Submitted while the recorder is dead or being replaced: sent again to the next one.
        for _ in range(100):
            recorder.submit(make_record(tokens=5))
        _wait_for(lambda: recorder._child is not first)
        assert recorder.flush(timeout=30)
    finally:
        recorder.stop()
    assert count_rows(database_url, Call) == 200
    assert recorder.stats.written >= 200 and recorder.stats.submitted == 200


def test_the_recorder_writes_what_it_has_when_the_gateway_vanishes(
    database_url: str, tmp_path: Path
) -> None:
    recorder = _recorder(database_url, tmp_path / "spool", [])
    child = recorder._child
    assert child is not None
    for _ in range(80):
        recorder.submit(make_record(tokens=5))
    with recorder._lock:
        recorder._send_queued()
    # As if the gateway died: its end of the socket closes without a word.
    child.connection.close()
    assert child.process.wait(30) == 0
    assert count_rows(database_url, Call) == 80


def test_records_beyond_the_queue_capacity_are_counted_dropped(tmp_path: Path) -> None:
    config = RecordingConfig(queue_capacity=3, spool_dir=tmp_path / "spool")
    recorder = RecorderProcess("sqlite:///unused.db", 1, config)
    # Not started: nothing drains the queue.
    for _ in range(5):
        recorder.submit(make_record(tokens=1))
    assert recorder.queue_depth == 3
    assert (recorder.stats.submitted, recorder.stats.dropped) == (5, 2)
