"""SQL that writes call rows: idempotent batched inserts, and the partitions they need."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Table, event, insert, select
from sqlalchemy.dialects import postgresql, sqlite

from gateway.recording.partitions import Slot, ensure_partitions
from gateway.recording.rows import RowBatch
from gateway.recording.storable import storable_rows
from gateway.usage.rollup_job import floor_hour
from gateway.usage.rollup_repository import mark_late_hours
from plumbline.models import Call, CallBody, CallLogprobs, LiveSample


def commit_without_waiting_for_wal(engine: Engine) -> None:
    """Every new Postgres session of `engine` commits before its WAL is flushed (opt-in)."""

    def relax(dbapi_connection: Any, _record: Any) -> None:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit = off")
        dbapi_connection.commit()

    if engine.dialect.name == "postgresql":
        event.listen(engine, "connect", relax)


def ensure_day_partitions(connection: Connection, slots: set[Slot]) -> None:
    """Create the Postgres partitions the given (day, retention class) slots need."""
    ensure_partitions(connection, slots)


def _insert_ignoring_duplicates(
    connection: Connection, table: Table, rows: list[dict[str, Any]]
) -> None:
    if not rows:
        return
    rows = storable_rows(rows)
    if connection.dialect.name == "postgresql":
        connection.execute(postgresql.insert(table).on_conflict_do_nothing(), rows)
    elif connection.dialect.name == "sqlite":
        connection.execute(sqlite.insert(table).on_conflict_do_nothing(), rows)
    else:
        connection.execute(insert(table), rows)


def write_batch(connection: Connection, batch: RowBatch) -> None:
    """Insert a batch; rows whose id is already stored are skipped, so replays are harmless."""
    _insert_ignoring_duplicates(connection, Call.__table__, batch.calls)  # type: ignore[arg-type]
    # A v1 row (or one spooled by an older release) has no `topk` key; one insert statement
    # needs the same keys in every row of its batch.
    logprobs = [row if "topk" in row else {**row, "topk": None} for row in batch.logprobs]
    _insert_ignoring_duplicates(
        connection,
        CallLogprobs.__table__,  # type: ignore[arg-type]
        logprobs,
    )
    _insert_ignoring_duplicates(connection, CallBody.__table__, batch.bodies)  # type: ignore[arg-type]
    _insert_ignoring_duplicates(
        connection,
        LiveSample.__table__,  # type: ignore[arg-type]
        batch.live_samples,
    )


def days_of(batch: RowBatch) -> set[Slot]:
    """The (UTC day, retention class) slots a batch's rows fall in."""
    # Logprob and body rows count too: a batch retried row by row may hold no call row.
    return {
        (row["created_at"].astimezone(UTC).date(), int(row.get("retention_days") or 0))
        for rows in (batch.calls, batch.logprobs, batch.bodies)
        for row in rows
    }


def database_answers(connection: Connection) -> None:
    """Run a trivial statement; raises if the database does not answer."""
    connection.execute(select(1))


def mark_late_calls(connection: Connection, batch: RowBatch, now: datetime) -> None:
    """Hours before the current one that this batch wrote calls into get their rollups redone.

    Calls are dated by arrival and written when they end, so a call that spans an hour's end
    lands after the job may have rolled that hour; so do spool replays after an outage.
    """
    current = floor_hour(now)
    late = {floor_hour(row["created_at"]) for row in batch.calls if row["created_at"] < current}
    if late and connection.dialect.name == "postgresql":
        mark_late_hours(connection, late)
