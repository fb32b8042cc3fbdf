"""The retention job: drop expired partitions (Postgres) or delete expired rows (SQLite).

A call's rows carry the retention class its team had when the call was written. On Postgres
each day of each call table is split by class, so a class's expired day is dropped whole,
without scanning a row. Whatever partitions cannot express is deleted row by row: rows of a
team that has since shortened its retention, day partitions made before classes existed,
and every expired row on SQLite.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from gateway.auth.audit import record_action
from gateway.recording.partitions import parse_partition_name
from gateway.retention import repository

log = logging.getLogger(__name__)
LOCK_TIMEOUT_MS = 5000


@dataclass(slots=True)
class RetentionReport:
    """What one pass of the retention job removed."""

    dropped_partitions: list[str] = field(default_factory=list)
    deleted_rows: dict[str, int] = field(default_factory=dict)
    skipped_partitions: list[str] = field(default_factory=list)

    def add(self, counts: dict[str, int]) -> None:
        """Add per-table row counts."""
        for table, count in counts.items():
            self.deleted_rows[table] = self.deleted_rows.get(table, 0) + count

    @property
    def empty(self) -> bool:
        """Whether nothing was removed."""
        return not self.dropped_partitions and not any(self.deleted_rows.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the audit log and the API."""
        return {
            "dropped_partitions": sorted(self.dropped_partitions),
            "deleted_rows": dict(sorted(self.deleted_rows.items())),
            "skipped_partitions": sorted(self.skipped_partitions),
        }


def _day_end(day: Any) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)


def _drop(session: Session, name: str, report: RetentionReport) -> None:
    """Drop a partition in a savepoint, so a lock timeout skips it instead of failing the pass."""
    try:
        with session.begin_nested():
            repository.drop_partition(session, name, LOCK_TIMEOUT_MS)
    except OperationalError as error:
        log.warning("retention: partition %s busy, left for the next pass (%s)", name, error)
        report.skipped_partitions.append(name)
        return
    report.dropped_partitions.append(name)


def _drop_expired_partitions(session: Session, now: datetime, report: RetentionReport) -> None:
    partitions = repository.call_partitions(session)
    for name, _ in partitions:
        parsed = parse_partition_name(name)
        days = parsed[2] if parsed is not None else None
        if parsed is None or not days:
            continue
        if _day_end(parsed[1]) <= now - timedelta(days=days):
            _drop(session, name, report)
    for name, split in partitions:
        parsed = parse_partition_name(name)
        if parsed is None or parsed[2] is not None or not split:
            continue
        # An emptied day is dropped once it is over (a late replay would recreate it).
        if _day_end(parsed[1]) <= now and repository.children_left(session, name) == 0:
            _drop(session, name, report)


def _delete_expired_classes(session: Session, now: datetime, report: RetentionReport) -> None:
    for days in repository.classes_in_use(session):
        if days > 0:
            calls = repository.delete_class_before(session, days, now - timedelta(days=days))
            report.add({"calls": calls})


def apply_retention(session: Session, now: datetime, actor: str = "retention") -> RetentionReport:
    """Remove every call row past its retention; audited when anything went."""
    report = RetentionReport()
    if session.get_bind().dialect.name == "postgresql":
        _drop_expired_partitions(session, now, report)
    else:
        _delete_expired_classes(session, now, report)
    for team_id, _, days in repository.teams_with_retention(session):
        report.add(
            repository.delete_team_calls_before(session, team_id, now - timedelta(days=days))
        )
    for team_id, days in repository.teams_with_topk_retention(session):
        dropped = repository.drop_team_topk_before(session, team_id, now - timedelta(days=days))
        report.add({"call_logprobs.topk": dropped})
    if not report.empty:
        record_action(session, actor, "retention.apply", details=report.as_dict())
    return report
