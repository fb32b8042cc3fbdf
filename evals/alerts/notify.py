"""Create the notifications of an alert event: one per channel, payload frozen at creation."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from evals.alerts.messages import AlertMessage
from evals.alerts.payloads import build_payload
from evals.alerts.repository import notifications as notification_repo
from evals.runs.result_rows import json_ready
from plumbline.models import Alert, AlertEvent, AlertNotification


def add_notifications(
    session: Session,
    alert: Alert,
    event: AlertEvent,
    message: AlertMessage,
    targets: Sequence[tuple[str, str]],
    *,
    hold_s: float,
) -> list[int]:
    """A pending notification per (channel name, kind); the ids to enqueue after commit."""
    ids = []
    for name, kind in targets:
        row = notification_repo.add_notification(
            session,
            AlertNotification(
                alert_id=alert.id,
                event_id=event.id,
                team_id=alert.team_id,
                channel=name,
                kind=kind,
                status="pending",
                attempts=0,
                attempt_log=[],
                payload=json_ready(build_payload(kind, message, hold_s=hold_s)),
                next_attempt_at=message.at,
            ),
        )
        ids.append(row.id)
    return ids
