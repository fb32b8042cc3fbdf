"""Postgres partition layout of the call tables: one partition per UTC day, split by class.

`calls`, `call_logprobs` and `call_bodies` are partitioned by RANGE (created_at) into days, and
each day by LIST (retention_days) into one partition per retention class present that day, so
the retention job drops a class's expired days whole. Classes come from a short fixed list
(`gateway.retention.classes`), so a day has at most that many partitions per table.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Connection, text

PARTITIONED_TABLES = ("calls", "call_logprobs", "call_bodies")
_NAME = re.compile(r"^(calls|call_logprobs|call_bodies)_p(\d{8})(?:_r(\d+))?$")
Slot = tuple[date, int]


def partition_name(table: str, day: date, retention_days: int | None = None) -> str:
    """The day partition of `table`, or its sub-partition for one retention class."""
    day_name = f"{table}_p{day:%Y%m%d}"
    return day_name if retention_days is None else f"{day_name}_r{retention_days}"


def parse_partition_name(name: str) -> tuple[str, date, int | None] | None:
    """(table, day, class or None for a day partition) of a partition's name."""
    found = _NAME.match(name)
    if found is None:
        return None
    day = datetime.strptime(found.group(2), "%Y%m%d").date()
    return found.group(1), day, int(found.group(3)) if found.group(3) is not None else None


def _split_days(connection: Connection, names: list[str]) -> set[str]:
    """Which of these day partitions are themselves partitioned (older ones are plain)."""
    rows = connection.execute(
        text("SELECT relname FROM pg_class WHERE relname = ANY(:names) AND relkind = 'p'"),
        {"names": names},
    )
    return {row[0] for row in rows}


def ensure_partitions(connection: Connection, slots: set[Slot]) -> None:
    """Create the day partitions and class sub-partitions that rows of `slots` need."""
    if connection.dialect.name != "postgresql" or not slots:
        return
    days = sorted({day for day, _ in slots})
    for day in days:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        end = start + timedelta(days=1)
        for table in PARTITIONED_TABLES:
            connection.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {partition_name(table, day)} PARTITION OF {table} "
                    f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}') "
                    "PARTITION BY LIST (retention_days)"
                )
            )
    split = _split_days(
        connection, [partition_name(t, d) for d in days for t in PARTITIONED_TABLES]
    )
    for day, retention in sorted(slots):
        for table in PARTITIONED_TABLES:
            parent = partition_name(table, day)
            if parent not in split:
                continue  # a plain day partition from before classes existed takes every row
            connection.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {partition_name(table, day, retention)} "
                    f"PARTITION OF {parent} FOR VALUES IN ({int(retention)})"
                )
            )
