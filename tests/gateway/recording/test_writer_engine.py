"""The recorder's engine (`writer=True`: native placeholders, no ping) writes every row kind,
rides out a connection the server dropped without calling it an outage, and commits without
waiting for the WAL only where asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import make_url, text

from gateway.config import RecordingConfig
from gateway.recording.calls_repository import commit_without_waiting_for_wal
from gateway.recording.sink import LogSink
from plumbline.db import create_db_engine
from plumbline.models import Call, CallBody, CallLogprobs
from tests.support.databases import PG_ADMIN_URL, count_rows, postgres_database
from tests.support.records import make_record


@pytest.fixture
def database_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _sink(url: str, spool: Path) -> LogSink:
    engine = create_db_engine(url, pool_size=2, writer=True)
    sink = LogSink(engine, RecordingConfig(flush_interval_ms=10, spool_dir=spool))
    sink.start()
    return sink


def _drop_connections(url: str) -> int:
    name = make_url(url).database
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    return len(rows)


def test_the_writer_engine_stores_calls_logprobs_and_bodies(
    database_url: str, tmp_path: Path
) -> None:
    sink = _sink(database_url, tmp_path / "spool")
    try:
        body = b'{"messages": [{"role": "user", "content": "hi"}]}'
        sink.submit(make_record(tokens=12, store_body=True, request_body=body))
        sink.submit(make_record(tokens=0, k=0))
        assert sink.flush(timeout=30)
    finally:
        sink.stop()
    assert count_rows(database_url, Call) == 2
    assert count_rows(database_url, CallLogprobs) == 1
    assert count_rows(database_url, CallBody) == 1
    assert (sink.stats.written, sink.stats.failed_batches, sink.stats.dropped) == (2, 0, 0)


def test_a_dropped_connection_is_retried_not_an_outage(database_url: str, tmp_path: Path) -> None:
    sink = _sink(database_url, tmp_path / "spool")
    try:
        sink.submit(make_record(tokens=5))
        assert sink.flush(timeout=30)
        # The pooled connection dies under the sink, as in a Postgres restart.
        assert _drop_connections(database_url) >= 1
        sink.submit(make_record(tokens=5))
        assert sink.flush(timeout=30)
    finally:
        sink.stop()
    assert count_rows(database_url, Call) == 2
    assert sink.stats.failed_batches == 0
    assert sink.stats.database_up
    assert sink.stats.spooled == 0


def test_the_opt_in_relaxed_commit_applies_to_the_writers_sessions_only(
    database_url: str, tmp_path: Path
) -> None:
    relaxed = create_db_engine(database_url, pool_size=1, writer=True)
    commit_without_waiting_for_wal(relaxed)
    other = create_db_engine(database_url, pool_size=1)
    sink = LogSink(relaxed, RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "spool"))
    sink.start()
    try:
        sink.submit(make_record(tokens=5))
        assert sink.flush(timeout=30)
    finally:
        sink.stop()
    with relaxed.connect() as connection:
        assert connection.execute(text("SHOW synchronous_commit")).scalar() == "off"
    with other.connect() as connection:
        assert connection.execute(text("SHOW synchronous_commit")).scalar() == "on"
    relaxed.dispose()
    other.dispose()
    assert count_rows(database_url, Call) == 1
