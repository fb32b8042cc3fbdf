"""Cron slots from suite schedules: only the latest, only while fresh, one run per slot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from evals.runs.schedules import create_due_runs, due_slot
from evals.transaction import in_transaction
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import EvalRun
from tests.support.databases import sqlite_database
from tests.workers.suites import import_yaml, suite_yaml

NOW = datetime(2026, 11, 29, 12, 0, 3, 500_000, tzinfo=UTC)


def test_the_latest_slot_runs_while_it_is_fresh() -> None:
    assert due_slot("* * * * * */2", NOW, 30) == NOW.replace(second=2, microsecond=0)
    assert due_slot("* * * * * */3", NOW, 30) == NOW.replace(second=3, microsecond=0)
    assert due_slot("*/5 * * * *", NOW, 300) == NOW.replace(second=0, microsecond=0)
    # A daily 03:00 run first seen at noon is skipped, not run nine hours late.
    assert due_slot("0 3 * * *", NOW, 300) is None


def test_each_slot_creates_one_run_however_often_it_is_ticked(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        sessions = make_session_factory(engine)
        try:
            every_minute = import_yaml(
                sessions, suite_yaml("hourly", extra="schedule: '* * * * *'")
            )
            import_yaml(sessions, suite_yaml("manual"))
            first = in_transaction(sessions, create_due_runs, NOW, 300)
            again = in_transaction(sessions, create_due_runs, NOW + timedelta(seconds=20), 300)
            next_minute = in_transaction(sessions, create_due_runs, NOW + timedelta(minutes=1), 300)
            with sessions() as session:
                runs = session.scalars(select(EvalRun).order_by(EvalRun.id)).all()
        finally:
            engine.dispose()
    assert len(first) == 1 and again == [] and len(next_minute) == 1
    assert [r.suite_id for r in runs] == [every_minute, every_minute]
    assert [r.trigger for r in runs] == ["schedule", "schedule"]
    assert [r.scheduled_for.minute for r in runs if r.scheduled_for] == [0, 1]
