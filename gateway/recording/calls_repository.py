"""SQL that writes call rows: idempotent batched inserts and day partitions on Postgres."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Table, insert, text
from sqlalchemy.dialects import postgresql, sqlite

from gateway.recording.rows import RowBatch
from plumbline.models import Call, CallBody, CallLogprobs, LiveSample

PARTITIONED_TABLES = ("calls", "call_logprobs", "call_bodies")


def partition_name(table: str, day: date) -> str:
    """Name of the partition of `table` that holds `day`."""
    return f"{table}_p{day:%Y%m%d}"


def ensure_day_partitions(connection: Connection, days: set[date]) -> None:
    """Create the Postgres partitions the given days need (no-op elsewhere)."""
    if connection.dialect.name != "postgresql":
        return
    for day in sorted(days):
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        end = start + timedelta(days=1)
        for table in PARTITIONED_TABLES:
            connection.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {partition_name(table, day)} PARTITION OF {table} "
                    f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
                )
            )


def _insert_ignoring_duplicates(
    connection: Connection, table: Table, rows: list[dict[str, Any]]
) -> None:
    if not rows:
        return
    if connection.dialect.name == "postgresql":
        connection.execute(postgresql.insert(table).on_conflict_do_nothing(), rows)
    elif connection.dialect.name == "sqlite":
        connection.execute(sqlite.insert(table).on_conflict_do_nothing(), rows)
    else:
        connection.execute(insert(table), rows)


def write_batch(connection: Connection, batch: RowBatch) -> None:
    """Insert a batch; rows whose id is already stored are skipped, so replays are harmless."""
    _insert_ignoring_duplicates(connection, Call.__table__, batch.calls)  # type: ignore[arg-type]
    _insert_ignoring_duplicates(
        connection,
        CallLogprobs.__table__,  # type: ignore[arg-type]
        batch.logprobs,
    )
    _insert_ignoring_duplicates(connection, CallBody.__table__, batch.bodies)  # type: ignore[arg-type]
    _insert_ignoring_duplicates(
        connection,
        LiveSample.__table__,  # type: ignore[arg-type]
        batch.live_samples,
    )


def days_of(batch: RowBatch) -> set[date]:
    """The UTC days a batch's rows fall on."""
    return {row["created_at"].astimezone(UTC).date() for row in batch.calls}
