"""Alerts as the CLI and API show them: list, one alert with its history, acknowledge."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from evals.alerting import AlertState, acknowledge
from evals.alerts.error_classes import shown_error
from evals.alerts.repository import alerts as alert_repo
from evals.alerts.repository import notifications as notification_repo
from evals.alerts.views import AlertDetail, AlertView
from evals.errors import ConflictError, EvalServiceError, NotFoundError
from evals.suites import repository as suite_repo
from plumbline.models import Alert, AlertEvent

STATUS_FILTERS = {
    "open": ("firing", "acknowledged"),
    "firing": ("firing",),
    "acknowledged": ("acknowledged",),
    "resolved": ("resolved",),
    "all": ("firing", "acknowledged", "resolved"),
}


def _fields(alert: Alert, suite: str, team: str) -> dict[str, Any]:
    return dict(
        id=alert.id,
        suite_id=alert.suite_id,
        suite=suite,
        team=team,
        rule=alert.rule,
        status=alert.status,
        summary=alert.summary,
        details=alert.details,
        fired_run_id=alert.fired_run_id,
        last_run_id=alert.last_run_id,
        resolved_run_id=alert.resolved_run_id,
        started_at=alert.started_at,
        acknowledged_at=alert.acknowledged_at,
        acknowledged_by=alert.acknowledged_by,
        resolved_at=alert.resolved_at,
        trace_id=alert.trace_id,
    )


def list_alerts(
    session: Session,
    *,
    team_id: int | None,
    status: str = "open",
    suite_id: int | None = None,
    limit: int = 100,
) -> list[AlertView]:
    """Alerts of the team (None: all teams), newest first."""
    if status not in STATUS_FILTERS:
        choices = ", ".join(STATUS_FILTERS)
        raise EvalServiceError(f"Unknown alert status {status!r}; use one of {choices}.", "status")
    rows = alert_repo.list_alerts(session, team_id, STATUS_FILTERS[status], suite_id, limit)
    return [AlertView(**_fields(alert, suite, team)) for alert, suite, team in rows]


def alert_detail(session: Session, alert_id: int, *, team_id: int | None) -> AlertDetail:
    """One alert with its events and notification deliveries."""
    alert = alert_repo.alert_by_id(session, alert_id, team_id)
    if alert is None:
        raise NotFoundError(f"No alert {alert_id} is visible to this key.", "alert")
    suite = suite_repo.suite_by_id(session, alert.suite_id, None)
    fields = _fields(
        alert, suite.name if suite else "?", suite_repo.team_name(session, alert.team_id)
    )
    events = [_event(e) for e in alert_repo.events_of(session, alert_id)]
    notifications = [
        {
            "id": n.id,
            "event_id": n.event_id,
            "channel": n.channel,
            "kind": n.kind,
            "status": n.status,
            "attempts": n.attempts,
            "last_status_code": n.last_status_code,
            "last_error": shown_error(n.last_error),
            "attempt_log": [{**a, "error": shown_error(a.get("error"))} for a in n.attempt_log],
            "delivered_at": n.delivered_at.isoformat() if n.delivered_at else None,
        }
        for n in notification_repo.notifications_of(session, alert_id)
    ]
    return AlertDetail(**fields, events=events, notifications=notifications)


def _event(event: AlertEvent) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "run_id": event.run_id,
        "actor": event.actor,
        "at": event.created_at.isoformat() if event.created_at else None,
    }


def acknowledge_alert(
    session: Session, alert_id: int, by: str, *, team_id: int | None, now: datetime
) -> AlertDetail:
    """Acknowledge a firing alert: it stays firing but is not re-sent until it resolves."""
    alert = alert_repo.alert_by_id(session, alert_id, team_id)
    if alert is None:
        raise NotFoundError(f"No alert {alert_id} is visible to this key.", "alert")
    if alert.status != "firing":
        raise ConflictError(
            f"Alert {alert_id} is {alert.status}; only a firing alert can be acknowledged.", "alert"
        )
    row = alert_repo.locked_state(session, alert.suite_id, alert.team_id)
    state = AlertState.from_dict(row.state)
    if state.rule(alert.rule).status.active:
        alert_repo.touch(row, acknowledge(state, alert.rule, by).to_dict(), None, now)
    alert_repo.update_alert(
        session,
        alert.id,
        status="acknowledged",
        acknowledged_at=now,
        acknowledged_by=by,
        updated_at=now,
    )
    alert_repo.add(session, AlertEvent(alert_id=alert.id, kind="acknowledged", actor=by))
    session.refresh(alert)
    return alert_detail(session, alert.id, team_id=team_id)
