"""SQL that aggregates usage per feature, model and endpoint, with latency percentiles."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, case, func, select
from sqlalchemy.orm import Session

from gateway.metering.timings import percentile
from plumbline.models import Call

PERCENTILE_COLUMNS = {"ttft": Call.ttft_ms, "itl": Call.itl_mean_ms, "e2e": Call.e2e_ms}
GROUP_COLUMNS = (Call.feature, Call.model, Call.endpoint)
Group = tuple[str | None, str | None, str | None]  # (feature, model, endpoint)


def _window(query: Any, team_id: int | None, since: datetime, until: datetime) -> Any:
    query = query.where(Call.created_at >= since, Call.created_at < until)
    if team_id is not None:
        query = query.where(Call.team_id == team_id)
    return query


def usage_totals(
    session: Session, team_id: int | None, since: datetime, until: datetime
) -> list[dict[str, Any]]:
    """Calls, errors, tokens and cost per (feature, model, endpoint)."""
    query = select(
        *GROUP_COLUMNS,
        func.count().label("calls"),
        func.sum(case((Call.status_code >= 400, 1), else_=0), type_=Integer).label("errors"),
        func.coalesce(func.sum(Call.prompt_tokens), 0).label("prompt_tokens"),
        func.coalesce(func.sum(Call.completion_tokens), 0).label("completion_tokens"),
        func.coalesce(func.sum(Call.input_cost), 0.0).label("input_cost"),
        func.coalesce(func.sum(Call.output_cost), 0.0).label("output_cost"),
    ).group_by(*GROUP_COLUMNS)
    rows = session.execute(_window(query, team_id, since, until)).mappings().all()
    return [dict(row) for row in rows]


def usage_percentiles(
    session: Session, team_id: int | None, since: datetime, until: datetime
) -> dict[Group, dict[str, float | None]]:
    """p50 and p95 of TTFT, ITL and end-to-end time per (feature, model, endpoint)."""
    if session.get_bind().dialect.name == "postgresql":
        return _percentiles_in_sql(session, team_id, since, until)
    return _percentiles_in_python(session, team_id, since, until)


def _percentiles_in_sql(
    session: Session, team_id: int | None, since: datetime, until: datetime
) -> dict[Group, dict[str, float | None]]:
    columns = []
    for name, column in PERCENTILE_COLUMNS.items():
        for q in (50, 95):
            columns.append(
                func.percentile_cont(q / 100).within_group(column).label(f"{name}_p{q}_ms")
            )
    query = select(*GROUP_COLUMNS, *columns).group_by(*GROUP_COLUMNS)
    rows = session.execute(_window(query, team_id, since, until)).mappings().all()
    return {
        (r["feature"], r["model"], r["endpoint"]): {k: v for k, v in r.items() if k.endswith("_ms")}
        for r in rows
    }


def _percentiles_in_python(
    session: Session, team_id: int | None, since: datetime, until: datetime
) -> dict[Group, dict[str, float | None]]:
    query = select(*GROUP_COLUMNS, *PERCENTILE_COLUMNS.values())
    values: dict[Group, dict[str, list[float]]] = defaultdict(
        lambda: {name: [] for name in PERCENTILE_COLUMNS}
    )
    for feature, model, endpoint, *measures in session.execute(
        _window(query, team_id, since, until)
    ):
        for name, value in zip(PERCENTILE_COLUMNS, measures, strict=True):
            if value is not None:
                values[(feature, model, endpoint)][name].append(value)
    result: dict[Group, dict[str, float | None]] = {}
    for group, by_name in values.items():
        result[group] = {}
        for name, samples in by_name.items():
            samples.sort()
            for q in (50, 95):
                result[group][f"{name}_p{q}_ms"] = percentile(samples, q / 100) if samples else None
    return result
