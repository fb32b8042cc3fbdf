"""Rollups on Postgres: the usage they give equals the calls table's, late calls included."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bench.queries.generate import populate
from gateway.recording.calls_repository import mark_late_calls, write_batch
from gateway.recording.rows import RowBatch
from gateway.usage.rollup_job import floor_hour, run_rollups
from gateway.usage.usage_read import EXACT, HISTOGRAM, _exact, usage_groups
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import UsageRollupPeriod
from tests.support.databases import postgres_database

pytestmark = pytest.mark.xdist_group("usage-rollups")
TEAMS = [1, 2, 3]
# Generated calls end 20 minutes past an hour, so every window has ragged edges.
UNTIL = floor_hour(datetime.now(UTC)) - timedelta(hours=1) + timedelta(minutes=20)
NOW = UNTIL + timedelta(minutes=5)


@pytest.fixture(scope="module")
def sessions() -> Iterator[sessionmaker[Session]]:
    with postgres_database("plumbline_rollups") as url:
        populate(url, TEAMS, rows=24_000, days=3, until=UNTIL)
        engine = create_db_engine(url)
        yield make_session_factory(engine)
        engine.dispose()


Group = tuple[str | None, str | None, str | None]


def _by_group(rows: list[dict[str, Any]]) -> dict[Group, dict[str, Any]]:
    return {(r["feature"], r["model"], r["endpoint"]): r for r in rows}


def _assert_same_usage(rolled: list[dict[str, Any]], exact: list[dict[str, Any]]) -> None:
    rolled_groups, exact_groups = _by_group(rolled), _by_group(exact)
    assert rolled_groups.keys() == exact_groups.keys()
    for key, want in exact_groups.items():
        got = rolled_groups[key]
        for column in ("calls", "errors", "prompt_tokens", "completion_tokens"):
            assert got[column] == want[column], (key, column)
        for column in ("input_cost", "output_cost"):
            assert got[column] == pytest.approx(want[column], rel=1e-9)
        for metric in ("ttft", "itl", "e2e"):
            for q in (50, 95):
                name = f"{metric}_p{q}_ms"
                if want[name] is None:
                    assert got[name] is None
                elif want[name] > 0:
                    assert abs(got[name] - want[name]) <= 0.05 * want[name], (key, name)


WINDOWS = {
    "two days, ragged": (UNTIL - timedelta(hours=50, minutes=17), UNTIL - timedelta(minutes=3)),
    "everything": (UNTIL - timedelta(days=4), NOW),
    "one day from midnight": (floor_hour(UNTIL - timedelta(days=2)).replace(hour=0), None),
}


def _window(name: str) -> tuple[datetime, datetime]:
    since, until = WINDOWS[name]
    return since, until or since + timedelta(days=1)


def _check_every_window(session: Session) -> None:
    for name in WINDOWS:
        since, until = _window(name)
        for team in (None, TEAMS[1]):
            rolled = usage_groups(session, team, since, until)
            exact = _exact(session, team, since, until)
            assert rolled.percentiles == HISTOGRAM, name
            assert exact.percentiles == EXACT
            _assert_same_usage(rolled.rows, exact.rows)


def test_before_any_rollup_usage_is_exact_from_the_calls(sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        since, until = _window("two days, ragged")
        assert usage_groups(session, None, since, until).percentiles == EXACT


def test_rollups_give_the_usage_of_the_calls_table(sessions: sessionmaker[Session]) -> None:
    report = run_rollups(sessions, NOW)
    assert report.hours >= 72 and report.days >= 2
    with sessions() as session:
        _check_every_window(session)
        since, until = _window("everything")
        kinds = {r["endpoint"] for r in usage_groups(session, None, since, until).rows}
        assert kinds == {"/v1/chat/completions", "/v1/completions", "/v1/responses"}
    again = run_rollups(sessions, NOW)
    assert (again.hours, again.days) == (0, 0)


def _late_call(created_at: datetime, team: int) -> dict[str, Any]:
    return {
        "id": f"late{created_at.timestamp():.0f}",
        "created_at": created_at,
        "retention_days": 0,
        "request_id": "late",
        "team_id": team,
        "feature": "chat",
        "model": "tiny",
        "source": "product",
        "endpoint": "/v1/chat/completions",
        "status_code": 200,
        "prompt_tokens": 1_000_000,
        "completion_tokens": 7,
        "ttft_ms": 5_000.0,
        "e2e_ms": 9_000.0,
        "input_cost": 1.0,
        "output_cost": 0.0,
    }


def test_a_late_call_is_counted_at_once_and_rolled_up_again(
    sessions: sessionmaker[Session],
) -> None:
    run_rollups(sessions, NOW)
    late_at = UNTIL - timedelta(hours=30, minutes=10)
    with sessions() as session, session.begin():
        batch = RowBatch(calls=[_late_call(late_at, TEAMS[1])])
        write_batch(session.connection(), batch)
        mark_late_calls(session.connection(), batch, NOW)
    with sessions() as session:
        dirty = session.scalars(
            select(UsageRollupPeriod.period_hours).where(UsageRollupPeriod.dirty)
        ).all()
        assert sorted(dirty) == [1, 24]
        _check_every_window(session)  # the dirty hour and day are read from the calls
        since, until = _window("everything")
        rows = _by_group(usage_groups(session, TEAMS[1], since, until).rows)
        assert rows[("chat", "tiny", "/v1/chat/completions")]["prompt_tokens"] >= 1_000_000
    report = run_rollups(sessions, NOW)
    assert (report.hours, report.days) == (1, 1)
    with sessions() as session:
        _check_every_window(session)
