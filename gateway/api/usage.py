"""Route: GET /api/usage, per feature and model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter

from gateway.api.deps import CallerDep, SessionDep, team_scope
from gateway.api.schemas import UsageReport, UsageRow
from gateway.errors import GatewayError
from gateway.usage.usage_read import usage_groups

router = APIRouter(prefix="/api/usage", tags=["usage"])


@router.get("", response_model=UsageReport)
def usage(
    caller: CallerDep,
    session: SessionDep,
    since: datetime | None = None,
    until: datetime | None = None,
) -> UsageReport:
    """Calls, tokens, cost, latency percentiles and error rate per feature and model."""
    until = until or datetime.now(UTC)
    since = since or until - timedelta(days=1)
    if since.tzinfo is None or until.tzinfo is None:
        raise GatewayError(400, "`since` and `until` need a timezone, e.g. 2026-11-29T00:00:00Z.")
    if since >= until:
        raise GatewayError(400, "`since` must be before `until`.", "since")
    team = team_scope(caller)
    groups = usage_groups(session, team, since, until)
    rows = [
        UsageRow(**row, error_rate=row["errors"] / row["calls"] if row["calls"] else 0.0)
        for row in groups.rows
    ]
    rows.sort(key=lambda r: (r.input_cost + r.output_cost, r.calls), reverse=True)
    return UsageReport(since=since, until=until, percentiles=groups.percentiles, data=rows)
