"""Retention per team: expired class partitions dropped on Postgres, rows deleted on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from gateway.config import RecordingConfig
from gateway.recording.sink import LogSink
from gateway.retention.service import apply_retention
from plumbline.db import create_db_engine, make_session_factory
from plumbline.migrate import alembic_config
from plumbline.models import AuditEntry, Call, CallBody, CallLogprobs, LiveSample, Team
from plumbline.settings import Settings
from tests.support.databases import postgres_database, sqlite_database
from tests.support.records import make_record
from workers.app import create_celery_app

BEFORE_CLASSES = "ddce75589c10"
NOW = datetime.now(UTC)
# (name, team's retention now, class its rows were written with, row ages in days, expired)
ROWS = [
    ("keep", None, 0, 40, False),
    ("keep", None, 0, 0, False),
    ("week", 7, 7, 10, True),
    ("week", 7, 7, 3, False),
    ("month", 30, 30, 40, True),
    ("month", 30, 30, 10, False),
    ("shortened", 7, 30, 10, True),  # written when the team kept 30 days; now it keeps 7
    ("shortened", 7, 30, 3, False),
    (None, None, 1, 3, True),  # a call with a bad key: the unattributed class
    (None, None, 1, 0, False),
]


@pytest.fixture(params=["postgres", "sqlite"])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    if request.param == "postgres":
        with postgres_database("plumbline_retention") as url:
            engine = create_db_engine(url)
            yield make_session_factory(engine)
            engine.dispose()
    else:
        with sqlite_database(tmp_path) as url:
            engine = create_db_engine(url)
            yield make_session_factory(engine)
            engine.dispose()


def _teams(sessions: sessionmaker[Session]) -> dict[str, int]:
    with sessions.begin() as session:
        teams = {}
        for name, days, *_ in ROWS:
            if name is not None and name not in teams:
                team = Team(name=name, retention_days=days, store_bodies=True)
                session.add(team)
                session.flush()
                teams[name] = team.id
    return teams


def _write(sessions: sessionmaker[Session], tmp_path: Path) -> dict[str, bool]:
    """Write every row of ROWS through the log sink; call id -> whether it should expire."""
    teams = _teams(sessions)
    engine = sessions.kw["bind"]
    sink = LogSink(engine, RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "spool"))
    sink.start()
    expected = {}
    for name, _, retention, age, expired in ROWS:
        record = make_record(
            team_id=teams[name] if name else None,
            created_at=NOW - timedelta(days=age, minutes=5),
            retention_days=retention,
            store_body=True,
            request_body=b'{"messages": []}',
        )
        sink.submit(record)
        expected[record.id] = expired
    with sessions.begin() as session:
        for name, team_id in teams.items():
            for age in (3, 40):
                session.add(
                    LiveSample(
                        call_id=f"live-{name}-{age}",
                        created_at=NOW - timedelta(days=age),
                        team_id=team_id,
                        feature="chat",
                        model="tiny",
                        endpoint="/v1/chat/completions",
                        keep_texts=False,
                        status="done",
                        attempts=1,
                        resamples=3,
                    )
                )
    assert sink.flush()
    sink.stop()
    assert sink.stats.written == len(ROWS)
    return expected


def _ids(session: Session, model: type) -> set[str]:
    column = model.id if model is Call else model.call_id  # type: ignore[attr-defined]
    return set(session.scalars(select(column)))


def test_expired_rows_go_and_nothing_else(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    expected = _write(sessions, tmp_path)
    kept = {call_id for call_id, expired in expected.items() if not expired}
    with sessions.begin() as session:
        report = apply_retention(session, datetime.now(UTC))
    with sessions() as session:
        assert _ids(session, Call) == kept
        assert _ids(session, CallLogprobs) == kept and _ids(session, CallBody) == kept
        live = set(session.scalars(select(LiveSample.call_id)))
        entry = session.scalars(select(AuditEntry)).one()
    # Teams with a retention lose their old samples; the team that keeps everything does not.
    assert live == {"live-keep-3", "live-keep-40", "live-week-3", "live-month-3"} | {
        "live-shortened-3"
    }
    assert entry.action == "retention.apply" and entry.actor == "retention"
    assert entry.details == report.as_dict()
    if sessions.kw["bind"].dialect.name == "postgresql":
        dropped = set(report.dropped_partitions)
        for table in ("calls", "call_logprobs", "call_bodies"):
            for age, days in ((10, 7), (40, 30), (3, 1)):
                day = (NOW - timedelta(days=age, minutes=5)).date()
                assert f"{table}_p{day:%Y%m%d}_r{days}" in dropped
        # The shortened team's row sat in a class-30 partition: deleted row by row.
        assert report.deleted_rows["calls"] == 1
    with sessions.begin() as session:
        again = apply_retention(session, datetime.now(UTC))
    assert again.empty
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == 1


def test_partitions_per_day_are_the_classes_written_that_day(tmp_path: Path) -> None:
    with postgres_database("plumbline_layout") as url:
        engine = create_db_engine(url)
        sessions = make_session_factory(engine)
        expected = _write(sessions, tmp_path)
        with engine.connect() as connection:
            names = connection.scalars(
                text(
                    "SELECT relname FROM pg_class "
                    "WHERE relname LIKE 'calls\\_p%' AND relkind IN ('r', 'p')"
                )
            ).all()
        engine.dispose()
    by_day: dict[str, set[str]] = {}
    for name in names:
        day, _, klass = name.removeprefix("calls_p").partition("_r")
        by_day.setdefault(day, set())
        if klass:
            by_day[day].add(klass)
    written: dict[str, set[str]] = {}
    for _, _, retention, age, _ in ROWS:
        day = f"{(NOW - timedelta(days=age, minutes=5)).date():%Y%m%d}"
        written.setdefault(day, set()).add(str(retention))
    assert by_day == written and len(expected) == len(ROWS)


def test_day_partitions_from_before_classes_keep_working(tmp_path: Path) -> None:
    old_day = (NOW - timedelta(days=20)).date()
    with postgres_database("plumbline_legacy") as url:
        config = alembic_config(url)
        command.downgrade(config, BEFORE_CLASSES)
        engine = create_db_engine(url)
        with engine.begin() as connection:
            start = datetime(old_day.year, old_day.month, old_day.day, tzinfo=UTC)
            connection.execute(
                text(
                    f"CREATE TABLE calls_p{old_day:%Y%m%d} PARTITION OF calls FOR VALUES FROM "
                    f"('{start.isoformat()}') TO ('{(start + timedelta(days=1)).isoformat()}')"
                )
            )
            connection.execute(text("INSERT INTO teams (id, name) VALUES (1, 'legacy')"))
            connection.execute(
                text(
                    "INSERT INTO calls (id, created_at, request_id, team_id, source, endpoint, "
                    "stream, status_code, cancelled) VALUES ('old-call', :at, 'r', 1, 'product', "
                    "'/v1/chat/completions', false, 200, false)"
                ),
                {"at": start + timedelta(hours=1)},
            )
        command.upgrade(config, "head")
        sessions = make_session_factory(engine)
        sink = LogSink(engine, RecordingConfig(flush_interval_ms=10, spool_dir=tmp_path / "s"))
        sink.start()
        late = make_record(team_id=1, created_at=start + timedelta(hours=2), retention_days=7)
        sink.submit(late)
        assert sink.flush()
        sink.stop()
        with sessions() as session:
            rows = session.execute(select(Call.id, Call.retention_days)).all()
            assert sorted(rows) == [(late.id, 7), ("old-call", 0)]
        with sessions.begin() as session:
            session.execute(text("UPDATE teams SET retention_days = 7 WHERE id = 1"))
        with sessions.begin() as session:
            report = apply_retention(session, datetime.now(UTC))
        with sessions() as session:
            assert session.scalar(select(func.count()).select_from(Call)) == 0
        engine.dispose()
    # The plain calls day stays (emptied row by row); the late row's logprobs had a new,
    # split day partition of their own, dropped whole.
    assert report.deleted_rows["calls"] == 2
    assert not any(name.startswith("calls_") for name in report.dropped_partitions)
    assert f"call_logprobs_p{old_day:%Y%m%d}_r7" in report.dropped_partitions


def test_the_worker_task_runs_the_job_and_beat_schedules_it(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        settings = Settings.model_validate(
            {"database": {"url": url}, "worker": {"retention_interval_s": 600}}
        )
        app = create_celery_app(settings, embedded=True)
        assert app.conf.beat_schedule["apply-retention"]["schedule"] == 600
        engine = create_db_engine(url)
        sessions = make_session_factory(engine)
        expected = _write(sessions, tmp_path)
        from workers.tasks.retention import apply

        done = apply()
        with sessions() as session:
            remaining = _ids(session, Call)
        engine.dispose()
    assert remaining == {c for c, expired in expected.items() if not expired}
    assert done["deleted_rows"]["calls"] == sum(expected.values())
