"""SQL for alert notifications: create, claim for delivery, record attempts, find stuck ones."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from plumbline.models import AlertNotification

RETRYABLE = ("pending", "retrying")


def add_notification(session: Session, row: AlertNotification) -> AlertNotification:
    """Insert a notification."""
    session.add(row)
    session.flush()
    return row


def claim(session: Session, notification_id: int, now: datetime, stale_before: datetime) -> bool:
    """Take a notification for one delivery attempt, unless done or being sent right now."""
    result = session.execute(
        update(AlertNotification)
        .where(
            AlertNotification.id == notification_id,
            or_(
                AlertNotification.status.in_(RETRYABLE),
                and_(
                    AlertNotification.status == "sending",
                    AlertNotification.claimed_at < stale_before,
                ),
            ),
        )
        .values(status="sending", claimed_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def notification_by_id(session: Session, notification_id: int) -> AlertNotification | None:
    """A notification by id."""
    return session.get(AlertNotification, notification_id)


def record_attempt(session: Session, notification_id: int, **values: Any) -> None:
    """Store the outcome of an attempt (status, counters, attempt log)."""
    session.execute(
        update(AlertNotification).where(AlertNotification.id == notification_id).values(**values)
    )


def stuck(session: Session, due_before: datetime, stale_claim_before: datetime) -> list[int]:
    """Notifications whose delivery message was lost: overdue, or claimed by a dead worker."""
    query = select(AlertNotification.id).where(
        or_(
            and_(
                AlertNotification.status.in_(RETRYABLE),
                or_(
                    AlertNotification.next_attempt_at.is_(None),
                    AlertNotification.next_attempt_at < due_before,
                ),
                AlertNotification.created_at < due_before,
            ),
            and_(
                AlertNotification.status == "sending",
                AlertNotification.claimed_at < stale_claim_before,
            ),
        )
    )
    return list(session.scalars(query.order_by(AlertNotification.id)))


def notifications_of(session: Session, alert_id: int) -> list[AlertNotification]:
    """Every notification of an alert, oldest first."""
    query = select(AlertNotification).where(AlertNotification.alert_id == alert_id)
    return list(session.scalars(query.order_by(AlertNotification.id)))
