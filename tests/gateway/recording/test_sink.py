"""The log sink writes batches idempotently, spools through an outage and replays afterwards."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import select, text

from gateway.config import RecordingConfig
from gateway.recording.rows import build_rows
from gateway.recording.sink import LogSink
from plumbline import logprob_read
from plumbline.db import create_db_engine
from plumbline.migrate import upgrade_to_head
from plumbline.models import Call, CallLogprobs, LogprobVocab
from tests.support.databases import PG_ADMIN_URL, count_rows, postgres_database, sqlite_database
from tests.support.logprob_match import chat_entries_match
from tests.support.records import logprob_entries, make_record
from tests.support.waiting import wait_until


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "postgres":
        with postgres_database() as url:
            yield url
    else:
        with sqlite_database(tmp_path) as url:
            yield url


def _sink(url: str, spool: Path, **config: object) -> LogSink:
    settings = RecordingConfig(flush_interval_ms=10, spool_dir=spool, **config)
    sink = LogSink(create_db_engine(url), settings)
    sink.start()
    return sink


def test_records_are_written_with_their_logprobs(database_url: str, tmp_path: Path) -> None:
    sink = _sink(database_url, tmp_path / "spool")
    records = [make_record(tokens=30) for _ in range(250)]
    for record in records:
        sink.submit(record)
    assert sink.flush()
    sink.stop()
    assert count_rows(database_url, Call) == 250
    assert count_rows(database_url, CallLogprobs) == 250
    engine = create_db_engine(database_url)
    with engine.connect() as connection:
        row = connection.execute(select(Call).where(Call.id == records[0].id)).one()
        payload, topk = connection.execute(
            select(CallLogprobs.payload, CallLogprobs.topk).where(
                CallLogprobs.call_id == records[0].id
            )
        ).one()
    engine.dispose()
    assert row.prompt_tokens == 30 and row.completion_tokens == 30
    assert row.ttft_ms == pytest.approx(100.0)
    assert row.engine_prefill_ms == 50.0
    assert row.input_cost == pytest.approx(30 * 0.5 / 1e6)
    assert payload is not None
    stored = logprob_read.decode(payload, topk)
    assert set(stored) == {0} and chat_entries_match(stored[0], logprob_entries(30, 5))
    assert sink.stats.written == 250 and sink.stats.spooled == 0


def test_v3_rows_are_written_with_their_vocabulary(database_url: str, tmp_path: Path) -> None:
    sink = _sink(database_url, tmp_path / "spool", logprob_form="v3")
    records = [make_record(tokens=30) for _ in range(50)]
    for record in records:
        sink.submit(record)
    assert sink.flush()
    sink.stop()
    engine = create_db_engine(database_url)
    with engine.connect() as connection:
        rows = connection.execute(select(CallLogprobs.payload, CallLogprobs.topk)).all()
        stored = logprob_read.read_rows(connection, [(p, t) for p, t in rows])
    engine.dispose()
    assert len(rows) == 50 and all(logprob_read.is_v3(p) for p, _ in rows)
    assert all(chat_entries_match(s[0], logprob_entries(30, 5)) for s in stored)
    assert sink.stats.written == 50
    assert count_rows(database_url, LogprobVocab) == 30 + 4  # " w0".." w29" and " a0".." a3"


def test_writing_a_batch_twice_keeps_one_row_per_call(database_url: str) -> None:
    from gateway.recording.calls_repository import days_of, ensure_day_partitions, write_batch

    batch = build_rows([make_record() for _ in range(5)])
    engine = create_db_engine(database_url)
    for _ in range(2):
        with engine.begin() as connection:
            ensure_day_partitions(connection, days_of(batch))
            write_batch(connection, batch)
    engine.dispose()
    assert count_rows(database_url, Call) == 5


def test_postgres_rows_land_in_day_partitions() -> None:
    with postgres_database() as url:
        sink = _sink(url, Path("/nonexistent-unused"))
        record = make_record()
        sink.submit(record)
        assert sink.flush()
        sink.stop()
        engine = create_db_engine(url)
        with engine.connect() as connection:
            where = connection.scalar(
                text("SELECT tableoid::regclass::text FROM calls WHERE id = :id"), {"id": record.id}
            )
        engine.dispose()
        # Each day is split by retention class; a team without retention is class 0 (keep).
        assert where == f"calls_p{record.created_at:%Y%m%d}_r0"


def test_outage_spools_then_replays_everything(tmp_path: Path) -> None:
    name = f"plumbline_outage_{int(time.time() * 1000)}"
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    sink = _sink(url, tmp_path / "spool")
    records = [make_record() for _ in range(120)]
    for record in records:
        sink.submit(record)
    assert sink.flush()
    assert sink.stats.database_up is False
    assert sink.stats.spooled == 120 and sink.stats.written == 0
    assert sink.spool.pending_records() == 120
    # The database "comes back": it now exists and has the schema.
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        upgrade_to_head(url)
        wait_until(lambda: sink.stats.replayed >= 120, timeout=20, what="120 records replayed")
        sink.stop()
        assert sink.stats.replayed == 120
        assert sink.spool.pending_files() == []
        assert count_rows(url, Call) == 120
    finally:
        sink.engine.dispose()
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_full_queue_spills_to_the_spool(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        config = RecordingConfig(queue_capacity=10, spool_dir=tmp_path / "spool")
        sink = LogSink(create_db_engine(url), config)  # writer not started: the queue only fills
        for _ in range(15):
            sink.submit(make_record())
        assert sink.queue_depth == 10
        assert sink.stats.spooled == 5
        sink.start()
        assert sink.flush()
        wait_until(lambda: sink.stats.replayed >= 5, timeout=10, what="5 records replayed")
        sink.stop()
        assert count_rows(url, Call) == 15
