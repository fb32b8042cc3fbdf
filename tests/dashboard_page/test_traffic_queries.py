"""The traffic buckets behind the overview charts: Postgres (in SQL) and SQLite (in Python) agree
with an independent computation (numpy's linear percentiles) on the same recorded calls."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy.orm import Session, sessionmaker

from gateway.dashboard.traffic_queries import TrafficWindow, traffic_buckets
from gateway.recording.calls_repository import days_of, ensure_day_partitions, write_batch
from gateway.recording.rows import build_rows
from plumbline.db import create_db_engine, make_session_factory
from tests.support.databases import postgres_database, sqlite_database
from tests.support.records import make_record

BASE = datetime(2026, 3, 2, 10, 0, 5, tzinfo=UTC)
STEP = 60


def call_specs() -> list[dict[str, Any]]:
    """30 calls 7 s apart over 2 teams, 2 features and 2 sources, some failed."""
    return [
        {
            "created_at": BASE + timedelta(seconds=7 * i),
            "team_id": 2 if i % 5 == 0 else 1,
            "feature": "search" if i % 3 == 0 else "chat",
            "source": "eval" if i % 4 == 0 else "product",
            "status_code": 500 if i % 7 == 3 else 200,
            "ttft_ms": 5.0 + 3 * i,
            "e2e_ms": 100.0 + 11 * i,
        }
        for i in range(30)
    ]


def record_of(spec: dict[str, Any]) -> Any:
    ttft_s = spec["ttft_ms"] / 1000
    return make_record(
        team_id=spec["team_id"],
        created_at=spec["created_at"],
        feature=spec["feature"],
        source=spec["source"],
        status_code=spec["status_code"],
        t_arrival=100.0,
        token_chunk_times=[100.0 + ttft_s + 0.001 * k for k in range(5)],
        t_done=100.0 + spec["e2e_ms"] / 1000,
    )


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def sessions(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[sessionmaker[Session]]:
    """A migrated database holding the calls of `call_specs`."""
    if request.param == "postgres":
        database = postgres_database("plumbline_dash_q")
    else:
        database = sqlite_database(tmp_path_factory.mktemp("traffic"))
    with database as url:
        engine = create_db_engine(url)
        batch = build_rows([record_of(spec) for spec in call_specs()])
        with engine.begin() as connection:
            ensure_day_partitions(connection, days_of(batch))
            write_batch(connection, batch)
        try:
            yield make_session_factory(engine)
        finally:
            engine.dispose()


def expected(window: TrafficWindow) -> dict[int, dict[str, Any]]:
    groups: dict[int, list[dict[str, Any]]] = {}
    for spec in call_specs():
        at = spec["created_at"]
        if not window.since <= at < window.until:
            continue
        if window.team_id is not None and spec["team_id"] != window.team_id:
            continue
        if window.feature is not None and spec["feature"] != window.feature:
            continue
        if window.source is not None and spec["source"] != window.source:
            continue
        start = int(at.timestamp()) // window.step_s * window.step_s
        groups.setdefault(start, []).append(spec)
    result = {}
    for start, specs in groups.items():
        row: dict[str, Any] = {
            "calls": len(specs),
            "errors": sum(s["status_code"] >= 400 for s in specs),
        }
        for name in ("ttft", "e2e"):
            values = [s[f"{name}_ms"] for s in specs]
            for q in (50, 95):
                row[f"{name}_p{q}_ms"] = pytest.approx(float(np.percentile(values, q)), abs=1e-3)
        result[start] = row
    return result


@pytest.mark.parametrize(
    ("team_id", "feature", "source"),
    [(None, None, None), (1, None, None), (2, None, None), (1, "chat", None), (None, None, "eval")],
)
def test_buckets_match_an_independent_computation(
    sessions: sessionmaker[Session], team_id: int | None, feature: str | None, source: str | None
) -> None:
    since = BASE.replace(second=0)
    window = TrafficWindow(team_id, since, since + timedelta(minutes=5), STEP, feature, source)
    with sessions() as session:
        found = traffic_buckets(session, window)
    assert found == expected(window)
    assert sum(row["calls"] for row in found.values()) > 0


def test_a_window_without_calls_has_no_buckets(sessions: sessionmaker[Session]) -> None:
    since = BASE - timedelta(hours=2)
    window = TrafficWindow(None, since, since + timedelta(hours=1), STEP)
    with sessions() as session:
        assert traffic_buckets(session, window) == {}


def test_the_window_end_is_exclusive(sessions: sessionmaker[Session]) -> None:
    first = call_specs()[0]["created_at"]
    window = TrafficWindow(None, first - timedelta(minutes=1), first, STEP)
    with sessions() as session:
        assert traffic_buckets(session, window) == {}
    window = TrafficWindow(None, first, first + timedelta(seconds=1), 1)
    with sessions() as session:
        assert traffic_buckets(session, window) == expected(window)
