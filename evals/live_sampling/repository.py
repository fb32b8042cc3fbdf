"""SQL for live samples: find pending ones, claim one, store its result, agreement per feature."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from plumbline.models import LiveSample


def pending_ids(session: Session, limit: int) -> list[int]:
    """The oldest samples waiting to be dispatched."""
    query = select(LiveSample.id).where(LiveSample.status == "pending")
    return list(session.scalars(query.order_by(LiveSample.id).limit(limit)))


def mark_queued(session: Session, sample_id: int, now: datetime) -> bool:
    """Move a pending sample to queued; False if another dispatcher took it."""
    result = session.execute(
        update(LiveSample)
        .where(LiveSample.id == sample_id, LiveSample.status == "pending")
        .values(status="queued", queued_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def claim(session: Session, sample_id: int, now: datetime, stale_before: datetime) -> bool:
    """Take a sample for resampling unless it is done or held by a live worker."""
    result = session.execute(
        update(LiveSample)
        .where(
            LiveSample.id == sample_id,
            or_(
                LiveSample.status.in_(("pending", "queued")),
                and_(LiveSample.status == "running", LiveSample.claimed_at < stale_before),
            ),
        )
        .values(status="running", claimed_at=now, attempts=LiveSample.attempts + 1)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def sample_by_id(session: Session, sample_id: int) -> LiveSample | None:
    """A live sample by id."""
    return session.get(LiveSample, sample_id)


def update_sample(session: Session, sample_id: int, **values: Any) -> None:
    """Set columns of a live sample."""
    session.execute(update(LiveSample).where(LiveSample.id == sample_id).values(**values))


def requeue_stale(session: Session, queued_before: datetime, running_before: datetime) -> int:
    """Samples whose message or worker was lost go back to pending."""
    result = session.execute(
        update(LiveSample)
        .where(
            or_(
                and_(LiveSample.status == "queued", LiveSample.queued_at < queued_before),
                and_(LiveSample.status == "running", LiveSample.claimed_at < running_before),
            )
        )
        .values(status="pending")
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def agreement_by_feature(
    session: Session, since: datetime, team_id: int | None = None
) -> list[tuple[str, int, float, int]]:
    """(feature, samples, mean agreement, resamples answered) over samples finished since."""
    query = (
        select(
            LiveSample.feature,
            func.count(),
            func.avg(LiveSample.agreement),
            func.sum(LiveSample.n_answered),
        )
        .where(
            LiveSample.status == "done",
            LiveSample.agreement.is_not(None),
            LiveSample.finished_at >= since,
        )
        .group_by(LiveSample.feature)
    )
    if team_id is not None:
        query = query.where(LiveSample.team_id == team_id)
    rows = session.execute(query.order_by(LiveSample.feature)).all()
    return [(str(f), int(n), float(a), int(s or 0)) for f, n, a, s in rows]
