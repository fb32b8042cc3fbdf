"""Migration 4f40b2a4ff00: rolled hours whose calls are all kept are rolled again per endpoint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from bench.queries.generate import populate
from gateway.usage.rollup_job import HOUR, floor_hour, run_rollups
from plumbline.db import create_db_engine, make_session_factory
from plumbline.migrate import alembic_config
from plumbline.models import Call, UsageRollup, UsageRollupPeriod
from tests.support.databases import postgres_database

ENDPOINTS_REVISION = "4f40b2a4ff00"
UNTIL = floor_hour(datetime.now(UTC)) - timedelta(hours=2)
KINDS = {"/v1/chat/completions", "/v1/completions", "/v1/responses"}


def _hour_rows(session: Session, start: datetime) -> list[UsageRollup]:
    """The hour's all-teams rollup rows."""
    rows = session.scalars(
        select(UsageRollup).where(
            UsageRollup.period_hours == 1, UsageRollup.period_start == start, UsageRollup.all_teams
        )
    )
    return list(rows)


def _hour_calls_before(session: Session, start: datetime) -> int:
    """What the hour's all-teams rows counted, read without the column the downgrade removed."""
    counted = session.scalar(
        select(func.sum(UsageRollup.calls)).where(
            UsageRollup.period_hours == 1, UsageRollup.period_start == start, UsageRollup.all_teams
        )
    )
    return int(counted or 0)


def test_whole_hours_are_rerolled_per_endpoint_and_thinned_hours_keep_their_totals() -> None:
    with postgres_database("plumbline_rollup_mig") as url:
        populate(url, [1, 2], rows=2_000, days=2, until=UNTIL)
        engine = create_db_engine(url)
        sessions = make_session_factory(engine)
        try:
            run_rollups(sessions, UNTIL + HOUR)
            config = alembic_config(url)
            # Back to the revision before, as a database rolled up before endpoints were kept.
            before = ScriptDirectory.from_config(config).get_revision(ENDPOINTS_REVISION)
            assert before is not None and isinstance(before.down_revision, str)
            command.downgrade(config, before.down_revision)
            thinned = UNTIL - timedelta(hours=5)
            with sessions() as session, session.begin():
                counted = _hour_calls_before(session, thinned)
                assert counted > 0
                # Retention (or a user's deletion) took some of this hour's calls since.
                session.execute(
                    delete(Call).where(
                        Call.created_at >= thinned, Call.created_at < thinned + timedelta(minutes=9)
                    )
                )
            command.upgrade(config, "head")
            with sessions() as session:
                dirty = dict(
                    session.execute(
                        select(UsageRollupPeriod.period_start, UsageRollupPeriod.dirty).where(
                            UsageRollupPeriod.period_hours == 1
                        )
                    ).all()
                )
                assert dirty.pop(thinned) is False
                # Every other hour with calls is to be rolled again; an empty one needs not.
                with_calls = {h for h in dirty if _hour_rows(session, h)}
                assert len(with_calls) >= 40
                assert {h for h, flag in dirty.items() if flag} == with_calls
                days = session.scalars(
                    select(UsageRollupPeriod.dirty).where(UsageRollupPeriod.period_hours == 24)
                ).all()
                assert days and all(days)
                assert {r.endpoint for r in _hour_rows(session, thinned)} == {None}
            report = run_rollups(sessions, UNTIL + HOUR)
            assert report.hours == len(with_calls)
            with sessions() as session:
                hour = UNTIL - timedelta(hours=3)
                called = session.scalars(
                    select(Call.endpoint)
                    .distinct()
                    .where(Call.created_at >= hour, Call.created_at < hour + HOUR)
                ).all()
                assert len(called) >= 2 and set(called) <= KINDS
                assert {r.endpoint for r in _hour_rows(session, hour)} == set(called)
                kept = _hour_rows(session, thinned)
                assert {r.endpoint for r in kept} == {None}
                assert sum(r.calls for r in kept) == counted
                left = session.scalar(select(func.count()).select_from(Call))
                assert left is not None and left < 2_000
        finally:
            engine.dispose()
