"""Routes: list alerts, one alert with its history, acknowledge a firing alert."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from evals.alerts.listing import STATUS_FILTERS, acknowledge_alert, alert_detail, list_alerts
from evals.alerts.views import AlertDetail
from gateway.api.alert_schemas import AckIn, AlertList
from gateway.api.deps import ReadCallerDep, SessionDep, team_scope
from gateway.api.eval_errors import gateway_errors
from gateway.api.eval_schemas import IdPath, IdQuery
from gateway.errors import GatewayError

router = APIRouter(prefix="/api/alerts", tags=["alerts"])


@router.get("", response_model=AlertList)
def alerts(
    caller: ReadCallerDep,
    session: SessionDep,
    status: Annotated[str, Query(description=", ".join(STATUS_FILTERS))] = "open",
    suite_id: IdQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AlertList:
    """The caller's team's alerts (admin: all teams), newest first."""
    if status not in STATUS_FILTERS:
        raise GatewayError(400, f"status must be one of {', '.join(STATUS_FILTERS)}.", "status")
    views = list_alerts(
        session, team_id=team_scope(caller), status=status, suite_id=suite_id, limit=limit
    )
    return AlertList(data=views)


@router.get("/{alert_id}", response_model=AlertDetail)
def alert(alert_id: IdPath, caller: ReadCallerDep, session: SessionDep) -> AlertDetail:
    """One alert with its events and notification attempts."""
    with gateway_errors():
        return alert_detail(session, alert_id, team_id=team_scope(caller))


@router.post("/{alert_id}/ack", response_model=AlertDetail)
def acknowledge(
    alert_id: IdPath, caller: ReadCallerDep, session: SessionDep, body: AckIn | None = None
) -> AlertDetail:
    """Acknowledge a firing alert: it stays open, and is not sent again until it resolves."""
    who = (body.by if body else None) or f"{caller.team_name} key {caller.key_id}"
    with gateway_errors():
        return acknowledge_alert(
            session, alert_id, who, team_id=team_scope(caller), now=datetime.now(UTC)
        )
