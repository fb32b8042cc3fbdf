"""Route: GET /api/usage, per feature, model and endpoint (the call kind), and per endpoint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.deps import ReadCallerDep, SessionDep, team_scope
from gateway.api.schemas import EndpointUsage, UsageReport, UsageRow
from gateway.errors import GatewayError
from gateway.usage.usage_read import usage_groups

router = APIRouter(prefix="/api/usage", tags=["usage"])
ENDPOINT_DESCRIPTION = "only this call kind's route, e.g. /v1/responses"


def per_endpoint(rows: list[UsageRow]) -> list[EndpointUsage]:
    """The rows summed per endpoint, most expensive first."""
    totals: dict[str | None, EndpointUsage] = {}
    for row in rows:
        total = totals.setdefault(row.endpoint, EndpointUsage(endpoint=row.endpoint))
        total.calls += row.calls
        total.errors += row.errors
        total.prompt_tokens += row.prompt_tokens
        total.completion_tokens += row.completion_tokens
        total.input_cost += row.input_cost
        total.output_cost += row.output_cost
        total.cost += row.input_cost + row.output_cost
    return sorted(totals.values(), key=lambda t: (t.cost, t.calls), reverse=True)


@router.get("", response_model=UsageReport)
def usage(
    caller: ReadCallerDep,
    session: SessionDep,
    since: datetime | None = None,
    until: datetime | None = None,
    endpoint: Annotated[str | None, Query(max_length=64, description=ENDPOINT_DESCRIPTION)] = None,
) -> UsageReport:
    """Calls, tokens, cost, latency percentiles and error rate per feature, model and endpoint."""
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
        if endpoint is None or row["endpoint"] == endpoint
    ]
    rows.sort(key=lambda r: (r.input_cost + r.output_cost, r.calls), reverse=True)
    return UsageReport(
        since=since,
        until=until,
        percentiles=groups.percentiles,
        data=rows,
        by_endpoint=per_endpoint(rows),
    )
