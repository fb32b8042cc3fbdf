"""The rollup job: roll up every finished hour, then every finished day, and redo dirty ones.

Each period is rolled in its own transaction that first marks it clean and holds its row: a
sink writing a late call into that period then waits and marks it dirty again after, so a
late call is never lost between the job's read and its commit (see `mark_late_hours`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from gateway.usage import rollup_repository as repo
from gateway.usage.aggregate import GroupKey, UsageAggregate, merge_into

log = logging.getLogger(__name__)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
LOOK_BACK = timedelta(days=400)  # older hours are not re-examined


@dataclass(slots=True)
class RollupReport:
    """What one pass rolled up."""

    hours: int = 0
    days: int = 0


def floor_hour(moment: datetime) -> datetime:
    """The start of the hour `moment` falls in (UTC)."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _all_teams(per_team: dict[GroupKey, UsageAggregate]) -> dict[GroupKey, UsageAggregate]:
    merged: dict[GroupKey, UsageAggregate] = {}
    for (_, feature, model, endpoint), value in per_team.items():
        copy = UsageAggregate()
        copy.add(value)
        merge_into(merged, (None, feature, model, endpoint), copy)
    return merged


def roll_hour(session: Session, start: datetime) -> None:
    """Roll one hour up from the calls table."""
    repo.lock_period(session, 1, start)
    per_team = repo.aggregate_calls(session, [(start, start + HOUR)], by_team=True)
    repo.replace_rollups(session, 1, start, per_team, _all_teams(per_team))


def roll_day(session: Session, day: datetime) -> None:
    """Roll one day up from its 24 hourly rollups."""
    repo.lock_period(session, 24, day)
    hours = [(1, day + HOUR * i) for i in range(24)]
    per_team = repo.stored_rollups(session, hours, team_id=None, by_team=True)
    repo.replace_rollups(session, 24, day, per_team, _all_teams(per_team))


def _first_hour(session: Session, known: dict[datetime, bool]) -> datetime | None:
    """Where rolling starts: the first known hour, or the first call before any hour was rolled."""
    starts = list(known)
    if all(known.values()):
        # Nothing rolled yet (the sink may have marked a few late hours): start at the oldest call.
        earliest = repo.earliest_call(session)
        starts += [floor_hour(earliest)] if earliest else []
    return min(starts) if starts else None


def hours_to_roll(session: Session, now: datetime) -> list[datetime]:
    """Finished hours never rolled or dirty, oldest first."""
    current = floor_hour(now)
    known = repo.hour_periods(session, current - LOOK_BACK)
    first = _first_hour(session, known)
    if first is None:
        return []
    hours = []
    start = max(first, current - LOOK_BACK)
    while start < current:
        if known.get(start, True):
            hours.append(start)
        start += HOUR
    return hours


def days_to_roll(session: Session, touched: set[datetime], now: datetime) -> list[datetime]:
    """Finished days among `touched` (or dirty) whose 24 hours are all rolled and clean."""
    dirty_days = {s for h, s in repo.dirty_periods(session) if h == 24}
    days = []
    for day in sorted(touched | dirty_days):
        if day + DAY <= floor_hour(now) and repo.rolled_hours_of_day(session, day) == 24:
            days.append(day)
    return days


def run_rollups(
    sessions: Callable[[], Session], now: datetime, progress: Callable[[str], None] | None = None
) -> RollupReport:
    """One pass: every hour and day that needs it, each in its own transaction (Postgres)."""
    report = RollupReport()
    with sessions() as session:
        if session.get_bind().dialect.name != "postgresql":
            return report  # SQLite reads usage from the calls table directly
        hours = hours_to_roll(session, now)
    for start in hours:
        with sessions() as session, session.begin():
            roll_hour(session, start)
        report.hours += 1
        if progress:
            progress(f"hour {start:%Y-%m-%d %H}:00")
    touched = {floor_hour(h).replace(hour=0) for h in hours}
    with sessions() as session:
        days = days_to_roll(session, touched, now)
    for day in days:
        with sessions() as session, session.begin():
            roll_day(session, day)
        report.days += 1
    if report.hours or report.days:
        log.info("usage rollups: %d hours, %d days", report.hours, report.days)
    return report
