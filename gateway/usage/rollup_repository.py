"""SQL of the usage rollups: aggregate calls, store and read rollup rows, track rolled periods."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    case,
    delete,
    false,
    func,
    null,
    or_,
    select,
    true,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from gateway.usage import latency_histogram
from gateway.usage.aggregate import METRICS, GroupKey, UsageAggregate, merge_into
from plumbline.models import Call, UsageRollup, UsageRollupPeriod

HOUR = timedelta(hours=1)
Ranges = Sequence[tuple[datetime, datetime]]
_METRIC_COLUMNS: dict[str, ColumnElement[float | None]] = {
    "ttft": Call.ttft_ms.expression,
    "itl": Call.itl_mean_ms.expression,
    "e2e": Call.e2e_ms.expression,
}


def _in_ranges(ranges: Ranges, team_id: int | None) -> list[ColumnElement[bool]]:
    spans = or_(*[and_(Call.created_at >= a, Call.created_at < b) for a, b in ranges])
    return [spans] if team_id is None else [spans, Call.team_id == team_id]


def _group_columns(by_team: bool) -> list[Any]:
    team = Call.team_id if by_team else null()
    return [
        team.label("team_id"),
        Call.feature.label("feature"),
        Call.model.label("model"),
        Call.endpoint.label("endpoint"),
    ]


def aggregate_calls(
    session: Session, ranges: Ranges, *, team_id: int | None = None, by_team: bool = False
) -> dict[GroupKey, UsageAggregate]:
    """Usage of the calls in `ranges` per (team or None, feature, model, endpoint)."""
    if not ranges:
        return {}
    keys = _group_columns(by_team)
    grouping = keys if by_team else keys[1:]
    where = _in_ranges(ranges, team_id)
    totals = (
        select(
            *keys,
            func.count().label("calls"),
            func.sum(case((Call.status_code >= 400, 1), else_=0)).label("errors"),
            func.coalesce(func.sum(Call.prompt_tokens), 0).label("prompt_tokens"),
            func.coalesce(func.sum(Call.completion_tokens), 0).label("completion_tokens"),
            func.coalesce(func.sum(Call.input_cost), 0.0).label("input_cost"),
            func.coalesce(func.sum(Call.output_cost), 0.0).label("output_cost"),
        )
        .where(*where)
        .group_by(*grouping)
    )
    found: dict[GroupKey, UsageAggregate] = {}
    for row in session.execute(totals).mappings():
        found[_key(row)] = UsageAggregate(
            calls=int(row["calls"]),
            errors=int(row["errors"]),
            prompt_tokens=int(row["prompt_tokens"]),
            completion_tokens=int(row["completion_tokens"]),
            input_cost=float(row["input_cost"]),
            output_cost=float(row["output_cost"]),
        )
    for metric, column in _METRIC_COLUMNS.items():
        bucket = latency_histogram.bucket_sql(column).label("bucket")
        counts = (
            select(*keys, bucket, func.count().label("n"))
            .where(*where, column.is_not(None))
            .group_by(*grouping, bucket)
        )
        for row in session.execute(counts).mappings():
            histogram = found[_key(row)].histograms[metric]
            histogram[int(row["bucket"])] = int(row["n"])
    return found


def _key(row: Any) -> GroupKey:
    return (row["team_id"], row["feature"], row["model"], row["endpoint"])


def lock_period(session: Session, hours: int, start: datetime) -> None:
    """Mark a period clean and hold its row until commit, so a late write re-marks it after."""
    statement = postgresql.insert(UsageRollupPeriod).values(
        period_hours=hours, period_start=start, dirty=False
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["period_hours", "period_start"], set_={"dirty": False}
        )
    )


def replace_rollups(
    session: Session,
    hours: int,
    start: datetime,
    per_team: dict[GroupKey, UsageAggregate],
    all_teams: dict[GroupKey, UsageAggregate],
) -> None:
    """Store a period's rollup rows in place of any it had."""
    session.execute(
        delete(UsageRollup).where(
            UsageRollup.period_hours == hours, UsageRollup.period_start == start
        )
    )
    rows = [
        _row(hours, start, flag, key, value)
        for flag, groups in ((False, per_team), (True, all_teams))
        for key, value in groups.items()
    ]
    if rows:
        session.execute(postgresql.insert(UsageRollup), rows)


def _row(
    hours: int, start: datetime, all_teams: bool, key: GroupKey, value: UsageAggregate
) -> dict[str, object]:
    team_id, feature, model, endpoint = key
    return {
        "period_start": start,
        "period_hours": hours,
        "all_teams": all_teams,
        "team_id": None if all_teams else team_id,
        "feature": feature,
        "model": model,
        "endpoint": endpoint,
        "calls": value.calls,
        "errors": value.errors,
        "prompt_tokens": value.prompt_tokens,
        "completion_tokens": value.completion_tokens,
        "input_cost": value.input_cost,
        "output_cost": value.output_cost,
        **{f"{m}_hist": latency_histogram.encode(value.histograms[m]) for m in METRICS},
    }


def stored_rollups(
    session: Session,
    periods: Iterable[tuple[int, datetime]],
    *,
    team_id: int | None,
    by_team: bool = False,
) -> dict[GroupKey, UsageAggregate]:
    """Merged rollups of the given periods: one team's, every team's, or per team."""
    periods = list(periods)
    if not periods:
        return {}
    chosen = or_(
        *[
            and_(UsageRollup.period_hours == h, UsageRollup.period_start.in_(starts))
            for h, starts in _by_length(periods).items()
        ]
    )
    if by_team:
        scope = UsageRollup.all_teams == false()
    elif team_id is None:
        scope = UsageRollup.all_teams == true()
    else:
        scope = and_(UsageRollup.all_teams == false(), UsageRollup.team_id == team_id)
    merged: dict[GroupKey, UsageAggregate] = {}
    for row in session.scalars(select(UsageRollup).where(chosen, scope)):
        part = UsageAggregate(
            row.calls,
            row.errors,
            row.prompt_tokens,
            row.completion_tokens,
            row.input_cost,
            row.output_cost,
            {m: latency_histogram.decode(getattr(row, f"{m}_hist")) for m in METRICS},
        )
        key = (row.team_id if by_team else None, row.feature, row.model, row.endpoint)
        merge_into(merged, key, part)
    return merged


def _by_length(periods: list[tuple[int, datetime]]) -> dict[int, list[datetime]]:
    grouped: dict[int, list[datetime]] = {}
    for hours, start in periods:
        grouped.setdefault(hours, []).append(start)
    return grouped


def clean_periods(session: Session, since: datetime, until: datetime) -> set[tuple[int, datetime]]:
    """(hours, start) of the rolled periods overlapping the window with no late rows since."""
    rows = session.execute(
        select(UsageRollupPeriod.period_hours, UsageRollupPeriod.period_start).where(
            UsageRollupPeriod.dirty == false(),
            UsageRollupPeriod.period_start >= since,
            UsageRollupPeriod.period_start < until,
        )
    )
    return {(int(h), s) for h, s in rows}


def dirty_periods(session: Session) -> list[tuple[int, datetime]]:
    """Periods that took calls after they were rolled, hours first."""
    rows = session.execute(
        select(UsageRollupPeriod.period_hours, UsageRollupPeriod.period_start)
        .where(UsageRollupPeriod.dirty == true())
        .order_by(UsageRollupPeriod.period_hours, UsageRollupPeriod.period_start)
    )
    return [(int(h), s) for h, s in rows]


def hour_periods(session: Session, since: datetime) -> dict[datetime, bool]:
    """Every hour period from `since` on, and whether it is dirty."""
    rows = session.execute(
        select(UsageRollupPeriod.period_start, UsageRollupPeriod.dirty).where(
            UsageRollupPeriod.period_hours == 1, UsageRollupPeriod.period_start >= since
        )
    )
    return {start: bool(dirty) for start, dirty in rows}


def earliest_call(session: Session) -> datetime | None:
    """When the oldest stored call was made."""
    return session.scalar(select(func.min(Call.created_at)))


def rolled_hours_of_day(session: Session, day: datetime) -> int:
    """How many of a day's hours are rolled and clean."""
    count = session.scalar(
        select(func.count()).where(
            UsageRollupPeriod.period_hours == 1,
            UsageRollupPeriod.dirty == false(),
            UsageRollupPeriod.period_start >= day,
            UsageRollupPeriod.period_start < day + timedelta(days=1),
        )
    )
    return int(count or 0)


def mark_late_hours(connection: Connection, starts: set[datetime]) -> None:
    """Mark hours (and their days) that took calls as possibly rolled already: re-roll them."""
    days = {s.replace(hour=0) for s in starts}
    rows = [{"period_hours": 1, "period_start": s, "dirty": True} for s in sorted(starts)]
    rows += [{"period_hours": 24, "period_start": d, "dirty": True} for d in sorted(days)]
    statement = postgresql.insert(UsageRollupPeriod)
    connection.execute(
        statement.on_conflict_do_update(
            index_elements=["period_hours", "period_start"], set_={"dirty": True}
        ),
        rows,
    )
