"""SQL behind the overview charts: calls, errors and latency percentiles per time bucket."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, Integer, case, extract, func, select
from sqlalchemy.orm import Session

from gateway.metering.timings import percentile
from plumbline.models import Call

LATENCIES = {"ttft": Call.ttft_ms, "e2e": Call.e2e_ms}
QUANTILES = (50, 95)


@dataclass(frozen=True, slots=True)
class TrafficWindow:
    """Which calls to bucket: a team (None: all), a window aligned to the step, filters."""

    team_id: int | None
    since: datetime
    until: datetime
    step_s: int
    feature: str | None = None
    source: str | None = None


def _filtered(query: Any, w: TrafficWindow) -> Any:
    query = query.where(Call.created_at >= w.since, Call.created_at < w.until)
    if w.team_id is not None:
        query = query.where(Call.team_id == w.team_id)
    if w.feature is not None:
        query = query.where(Call.feature == w.feature)
    if w.source is not None:
        query = query.where(Call.source == w.source)
    return query


def traffic_buckets(session: Session, w: TrafficWindow) -> dict[int, dict[str, Any]]:
    """Per bucket (seconds since the epoch at its start): calls, errors, latency percentiles.

    Buckets without calls are absent; the caller fills the gaps.
    """
    if session.get_bind().dialect.name == "postgresql":
        return _buckets_in_sql(session, w)
    return _buckets_in_python(session, w)


def _buckets_in_sql(session: Session, w: TrafficWindow) -> dict[int, dict[str, Any]]:
    epoch = extract("epoch", Call.created_at)
    bucket = func.cast(func.floor(epoch / w.step_s) * w.step_s, Integer).label("bucket")
    columns = [
        bucket,
        func.count().label("calls"),
        func.sum(case((Call.status_code >= 400, 1), else_=0), type_=Integer).label("errors"),
    ]
    for name, column in LATENCIES.items():
        for q in QUANTILES:
            ordered = func.percentile_cont(q / 100).within_group(column)
            columns.append(func.cast(ordered, Float).label(f"{name}_p{q}_ms"))
    query = _filtered(select(*columns), w).group_by(bucket)
    return {
        int(row["bucket"]): {k: v for k, v in row.items() if k != "bucket"}
        for row in session.execute(query).mappings()
    }


def _buckets_in_python(session: Session, w: TrafficWindow) -> dict[int, dict[str, Any]]:
    # SQLite has no percentile aggregate; the embedded mode's volumes make this cheap enough.
    query = _filtered(
        select(Call.created_at, Call.status_code, *LATENCIES.values()), w
    ).execution_options(yield_per=5000)
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    values: dict[int, dict[str, list[float]]] = defaultdict(lambda: {n: [] for n in LATENCIES})
    for created_at, status_code, *latencies in session.execute(query):
        at = created_at if created_at.tzinfo else created_at.replace(tzinfo=UTC)
        start = int(at.timestamp()) // w.step_s * w.step_s
        counts[start][0] += 1
        counts[start][1] += status_code >= 400
        for name, value in zip(LATENCIES, latencies, strict=True):
            if value is not None:
                values[start][name].append(value)
    result: dict[int, dict[str, Any]] = {}
    for start, (calls, errors) in counts.items():
        row: dict[str, Any] = {"calls": calls, "errors": errors}
        for name, samples in values[start].items():
            samples.sort()
            for q in QUANTILES:
                row[f"{name}_p{q}_ms"] = percentile(samples, q / 100) if samples else None
        result[start] = row
    return result
