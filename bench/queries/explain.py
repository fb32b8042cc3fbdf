"""EXPLAIN ANALYZE of the SQL the usage endpoint really sends (captured from its own code)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from sqlalchemy import Engine, event

from gateway.usage.usage_read import usage_groups
from plumbline.db import create_db_engine, make_session_factory


def _captured(engine: Engine, since: datetime, until: datetime) -> list[tuple[str, Any]]:
    statements: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, sql: str, params: Any, _context: Any, _many: bool) -> None:
        if sql.lstrip().upper().startswith("SELECT"):
            statements.append((sql, params))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        with make_session_factory(engine)() as session:
            usage_groups(session, None, since, until)
    finally:
        event.remove(engine, "before_cursor_execute", keep)
    return statements


def usage_plans(url: str, since: datetime, until: datetime, lines: int = 10) -> list[str]:
    """The first `lines` lines of each usage statement's EXPLAIN (ANALYZE, BUFFERS)."""
    engine = create_db_engine(url)
    found: list[str] = []
    try:
        for sql, params in _captured(engine, since, until):
            with engine.connect() as connection:
                driver = connection.connection.driver_connection
                assert driver is not None
                plan = driver.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params).fetchall()
            rows = [str(row[0]) for row in plan if "Filter:" not in str(row[0])]
            found += rows[:lines]
            found += [r for r in rows[lines:] if r.startswith(("Planning", "Execution"))]
            found.append("")
    finally:
        engine.dispose()
    return found


def explain_sql(url: str, sql: bytes, lines: int = 10) -> list[str]:
    """The first lines of EXPLAIN (ANALYZE, BUFFERS) of a panel's expanded SQL."""
    with psycopg.connect(url, autocommit=True) as connection:
        plan = connection.execute(b"EXPLAIN (ANALYZE, BUFFERS) " + sql).fetchall()
    rows = [str(row[0]) for row in plan if "Filter:" not in str(row[0])]
    return rows[:lines] + [r for r in rows[lines:] if r.startswith(("Planning", "Execution"))]
