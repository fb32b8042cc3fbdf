"""Values a backend or client chose are fitted to their columns: one cannot fail a batch."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from gateway.config import RecordingConfig
from gateway.recording.sink import LogSink
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call
from tests.support.databases import postgres_database
from tests.support.records import make_record


def test_odd_values_are_fitted_and_the_batch_is_written(tmp_path: Path) -> None:
    odd = make_record(
        # What a hostile backend may answer: counts past the column, text where numbers go.
        usage={"prompt_tokens": 2**40, "completion_tokens": "many", "total_tokens": -(2**70)},
        engine_metrics={"queue_time_ms": "slow", "time_to_first_token_ms": 10**400},
        finish_reason="stop" * 100,
        error_type="e" * 300,
        error_message="bad \x00 byte",
        end_user="\ud800 lone surrogate",
    )
    records = [make_record() for _ in range(10)] + [odd]
    with postgres_database("plumbline_fit") as url:
        engine = create_db_engine(url)
        sink = LogSink(engine, RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path))
        sink.start()
        for record in records:
            sink.submit(record)
        try:
            assert sink.flush()
            sink.stop()
            assert sink.stats.database_up and sink.stats.written == 11
            assert sink.stats.quarantined == 0 and sink.spool.pending_files() == []
            with make_session_factory(engine)() as session:
                row = session.scalars(select(Call).where(Call.id == odd.id)).one()
        finally:
            engine.dispose()
    assert row.prompt_tokens is None and row.completion_tokens is None
    assert row.engine_queue_ms is None and row.engine_prefill_ms is None
    assert row.finish_reason == ("stop" * 100)[:32]
    assert row.error_type == "e" * 128
    assert row.error_message == "bad \ufffd byte"
    assert row.end_user == "? lone surrogate"
