"""Top-k retention per team: alternatives dropped after their period, sampled data untouched."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from gateway.config import RecordingConfig
from gateway.recording.sink import LogSink
from gateway.retention.service import apply_retention
from plumbline import logprob_read
from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call, CallLogprobs, Team
from tests.support.databases import postgres_database, sqlite_database
from tests.support.logprob_match import chat_entries_match
from tests.support.records import logprob_entries, make_record

NOW = datetime.now(UTC)
# (team, its top-k retention, row age in days, top-k expected gone)
ROWS = [
    ("short", 7, 10, True),
    ("short", 7, 3, False),
    ("plain", None, 10, False),
    ("plain", None, 3, False),
]


@pytest.fixture(params=["postgres", "sqlite"])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    if request.param == "postgres":
        with postgres_database("plumbline_topk") as url:
            engine = create_db_engine(url)
            yield make_session_factory(engine)
            engine.dispose()
    else:
        with sqlite_database(tmp_path) as url:
            engine = create_db_engine(url)
            yield make_session_factory(engine)
            engine.dispose()


def _write(sessions: sessionmaker[Session], tmp_path: Path) -> dict[str, bool]:
    with sessions.begin() as session:
        teams = {}
        for name, days, *_ in ROWS:
            if name not in teams:
                team = Team(name=name, retention_days=30, topk_retention_days=days)
                session.add(team)
                session.flush()
                teams[name] = team.id
    sink = LogSink(
        sessions.kw["bind"],
        RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "spool", logprob_form="v2"),
    )
    sink.start()
    expected = {}
    for name, _, age, gone in ROWS:
        record = make_record(
            team_id=teams[name],
            tokens=12,
            created_at=NOW - timedelta(days=age, minutes=5),
            retention_days=30,
        )
        sink.submit(record)
        expected[record.id] = gone
    assert sink.flush()
    sink.stop()
    return expected


def _rows(session: Session) -> dict[str, CallLogprobs]:
    return {row.call_id: row for row in session.scalars(select(CallLogprobs))}


def test_topk_goes_after_its_period_and_sampled_data_stays(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    expected = _write(sessions, tmp_path)
    with sessions() as session:
        before = {k: (r.payload, r.topk) for k, r in _rows(session).items()}
    assert all(topk is not None for _, topk in before.values())
    with sessions.begin() as session:
        report = apply_retention(session, datetime.now(UTC))
    assert report.deleted_rows["call_logprobs.topk"] == 1
    with sessions() as session:
        after = _rows(session)
        calls = set(session.scalars(select(Call.id)))
    assert calls == set(expected)  # the calls themselves are kept: their retention is 30 days
    sent = logprob_entries(12, 5)
    for call_id, gone in expected.items():
        row = after[call_id]
        assert row.payload == before[call_id][0]  # sampled payload byte for byte
        assert (row.topk is None) is gone
        assert logprob_read.topk_expired(row.payload, row.topk) is gone
        stored = logprob_read.decode(row.payload, row.topk)[0]
        if gone:
            assert [e["top_logprobs"] for e in stored] == [[]] * 12
            sampled = [{**e, "top_logprobs": []} for e in sent]
            assert stored == sampled  # tokens, bytes and sampled logprobs exactly
        else:
            assert chat_entries_match(stored, sent)
    with sessions.begin() as session:
        again = apply_retention(session, datetime.now(UTC))
    assert again.empty


def _run(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PLUMBLINE_DATABASE__URL": database, "PLUMBLINE_KEY_SALT": "pepper", "PATH": "/usr/bin"}
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_cli_sets_and_bounds_topk_retention(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _run(database, "migrate").returncode == 0
    made = _run(database, "teams", "set", "legal", "--create", "--topk-retention-days", "7")
    assert made.returncode == 0 and "topk_retention_days=7" in made.stdout, made.stderr
    assert "topk=7" in _run(database, "teams", "list").stdout
    for bad in ("-1", "731"):
        refused = _run(database, "teams", "set", "legal", "--topk-retention-days", bad)
        assert refused.returncode == 1 and "topk_retention_days must be 1 to 730" in refused.stderr
        assert "Traceback" not in refused.stderr
    cleared = _run(database, "teams", "set", "legal", "--topk-retention-days", "0")
    assert cleared.returncode == 0 and "topk_retention_days=None" in cleared.stdout


def test_a_batch_mixing_rows_with_and_without_top_k_is_written(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    sink = LogSink(
        sessions.kw["bind"],
        RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "spool", logprob_form="v2"),
    )
    sink.start()
    bare = [{**entry, "top_logprobs": []} for entry in logprob_entries(6, 5)]
    sent = {5: logprob_entries(6, 5), 0: bare, 3: logprob_entries(6, 3)}
    records = [
        make_record(tokens=6, k=k, logprob_chunks=[(0, orjson.dumps(sent[k])[1:-1])])
        for k in (5, 0, 3, 0)
    ]
    for record in records:
        sink.submit(record)
    assert sink.flush()
    sink.stop()
    assert sink.stats.written == 4 and sink.stats.dropped == 0
    with sessions() as session:
        rows = _rows(session)
    for record in records:
        row = rows[record.id]
        assert (row.topk is None) is (record.logprob_k == 0)
        stored = logprob_read.decode(row.payload, row.topk)[0]
        assert chat_entries_match(stored, sent[record.logprob_k])
