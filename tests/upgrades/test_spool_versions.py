"""A spool line says its format: a release replays the formats it knows and keeps the rest."""

from __future__ import annotations

from pathlib import Path

import orjson

from gateway.config import RecordingConfig
from gateway.recording.rows import build_rows
from gateway.recording.sink import LogSink
from gateway.recording.spool import FORMAT, encode_batch
from plumbline.db import create_db_engine
from plumbline.models import Call
from tests.support.databases import count_rows, sqlite_database
from tests.support.records import make_record
from tests.support.waiting import wait_until


def test_a_later_releases_format_is_kept_aside_and_todays_replays(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    today = encode_batch(build_rows([make_record(team_id=None)]))
    assert orjson.loads(today)["format"] == FORMAT
    later = orjson.dumps({**orjson.loads(today), "format": FORMAT + 1}) + b"\n"
    (spool / "spool-20260101T000000000000-1-000000001.jsonl").write_bytes(later)
    (spool / "spool-20260101T000000000000-1-000000002.jsonl").write_bytes(today)
    with sqlite_database(tmp_path) as url:
        sink = LogSink(
            create_db_engine(url), RecordingConfig(flush_interval_ms=10, spool_dir=spool)
        )
        sink.start()
        try:
            wait_until(lambda: not sink.spool.pending_files(), timeout=30, what="the replay")
        finally:
            sink.stop()
            sink.engine.dispose()
        assert count_rows(url, Call) == 1
    kept = spool / "spool-20260101T000000000000-1-000000001.unreadable"
    assert kept.read_bytes() == later, "the unknown format is kept as written, for a later release"
    assert sink.stats.replayed == 1
