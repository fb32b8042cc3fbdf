"""Usage per (feature, model, endpoint) for a window: rollups, and raw calls at the edges."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from gateway.usage import latency_histogram, usage_queries
from gateway.usage import rollup_repository as repo
from gateway.usage.aggregate import METRICS, GroupKey, UsageAggregate, merge_into
from gateway.usage.window_plan import plan_window

EXACT = "exact"
HISTOGRAM = "histogram"


@dataclass(frozen=True, slots=True)
class UsageGroups:
    """Rows per (feature, model, endpoint) and how their percentiles were computed."""

    rows: list[dict[str, Any]]
    percentiles: str


def _row(key: GroupKey, value: UsageAggregate) -> dict[str, Any]:
    _, feature, model, endpoint = key
    row: dict[str, Any] = {
        "feature": feature,
        "model": model,
        "endpoint": endpoint,
        "calls": value.calls,
        "errors": value.errors,
        "prompt_tokens": value.prompt_tokens,
        "completion_tokens": value.completion_tokens,
        "input_cost": value.input_cost,
        "output_cost": value.output_cost,
    }
    for metric in METRICS:
        for q in (50, 95):
            row[f"{metric}_p{q}_ms"] = latency_histogram.percentile(
                value.histograms[metric], q / 100
            )
    return row


def _exact(session: Session, team: int | None, since: datetime, until: datetime) -> UsageGroups:
    totals = usage_queries.usage_totals(session, team, since, until)
    percentiles = usage_queries.usage_percentiles(session, team, since, until)
    rows = [{**t, **percentiles.get((t["feature"], t["model"], t["endpoint"]), {})} for t in totals]
    return UsageGroups(rows, EXACT)


def usage_groups(
    session: Session, team: int | None, since: datetime, until: datetime
) -> UsageGroups:
    """Usage of one team (or every team) in [since, until)."""
    if session.get_bind().dialect.name != "postgresql":
        return _exact(session, team, since, until)
    plan = plan_window(since, until, repo.clean_periods(session, since, until))
    if not plan.periods:
        return _exact(session, team, since, until)
    merged = repo.stored_rollups(session, plan.periods, team_id=team)
    for key, part in repo.aggregate_calls(session, plan.raw, team_id=team).items():
        merge_into(merged, key, part)
    rows = [_row(key, value) for key, value in merged.items()]
    return UsageGroups(rows, HISTOGRAM)
