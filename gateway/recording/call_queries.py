"""SQL that reads calls: filtered keyset pages, one call with its logprobs and body."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session

from plumbline.models import Call, CallBody, CallLogprobs


@dataclass(frozen=True, slots=True)
class CallFilter:
    """What the caller asked to see."""

    team_id: int | None
    feature: str | None = None
    model: str | None = None
    status: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    endpoint: str | None = None
    trace_id: str | None = None


def _apply(query: Select[tuple[Call]], f: CallFilter) -> Select[tuple[Call]]:
    if f.team_id is not None:
        query = query.where(Call.team_id == f.team_id)
    if f.feature is not None:
        query = query.where(Call.feature == f.feature)
    if f.trace_id is not None:
        query = query.where(Call.trace_id == f.trace_id)
    if f.model is not None:
        query = query.where(Call.model == f.model)
    if f.source is not None:
        query = query.where(Call.source == f.source)
    if f.endpoint is not None:
        query = query.where(Call.endpoint == f.endpoint)
    if f.since is not None:
        query = query.where(Call.created_at >= f.since)
    if f.until is not None:
        query = query.where(Call.created_at < f.until)
    if f.status == "ok":
        query = query.where(Call.status_code < 400)
    elif f.status == "error":
        query = query.where(Call.status_code >= 400, Call.cancelled.is_(False))
    elif f.status == "cancelled":
        query = query.where(Call.cancelled.is_(True))
    elif f.status is not None and f.status.isdigit():
        query = query.where(Call.status_code == int(f.status))
    return query


def page_of_calls(
    session: Session, f: CallFilter, limit: int, after: tuple[datetime, str] | None
) -> list[Call]:
    """Newest first, `limit` calls older than the `after` position."""
    query = _apply(select(Call), f)
    if after is not None:
        created, call_id = after
        query = query.where(
            or_(Call.created_at < created, and_(Call.created_at == created, Call.id < call_id))
        )
    query = query.order_by(Call.created_at.desc(), Call.id.desc()).limit(limit)
    return list(session.scalars(query))


def one_call(session: Session, call_id: str, team_id: int | None) -> Call | None:
    """A call by id, if the team may see it."""
    query = select(Call).where(Call.id == call_id)
    if team_id is not None:
        query = query.where(Call.team_id == team_id)
    return session.scalar(query)


def logprobs_of(session: Session, call: Call) -> CallLogprobs | None:
    """The logprobs row of a call."""
    return session.scalar(
        select(CallLogprobs).where(
            CallLogprobs.call_id == call.id, CallLogprobs.created_at == call.created_at
        )
    )


def body_of(session: Session, call: Call) -> CallBody | None:
    """The stored bodies of a call."""
    return session.scalar(
        select(CallBody).where(CallBody.call_id == call.id, CallBody.created_at == call.created_at)
    )
