"""Routes: the near-tie report per feature, and the agreement of resampled live traffic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query

from evals.live_sampling.repository import agreement_by_feature
from gateway.api.alert_schemas import (
    LiveAgreementOut,
    LiveAgreementReport,
    NearTieOut,
    NearTieReport,
)
from gateway.api.deps import ReadCallerDep, SessionDep, team_scope
from gateway.errors import GatewayError
from gateway.stability.near_tie_queries import near_tie_features

router = APIRouter(prefix="/api/stability", tags=["stability"])


def _window(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
    until = until or datetime.now(UTC)
    since = since or until - timedelta(days=1)
    if since.tzinfo is None or until.tzinfo is None:
        raise GatewayError(400, "`since` and `until` need a timezone, e.g. 2026-11-29T00:00:00Z.")
    if since >= until:
        raise GatewayError(400, "`since` must be before `until`.", "since")
    return since, until


@router.get("/near-ties", response_model=NearTieReport)
def near_ties(
    caller: ReadCallerDep,
    session: SessionDep,
    since: datetime | None = None,
    until: datetime | None = None,
    min_calls: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> NearTieReport:
    """Features whose answers most often hinge on a near tie (from each call's logprobs)."""
    since, until = _window(since, until)
    team = team_scope(caller)
    rows = near_tie_features(session, team, since, until, min_calls=min_calls, limit=limit)
    live = {f: a for f, _, a, _ in agreement_by_feature(session, since, team)}
    data = [
        NearTieOut(
            **{s: getattr(r, s) for s in r.__slots__}, live_agreement=live.get(r.feature or "")
        )
        for r in rows
    ]
    return NearTieReport(since=since, until=until, data=data)


@router.get("/live", response_model=LiveAgreementReport)
def live_agreement(
    caller: ReadCallerDep, session: SessionDep, since: datetime | None = None
) -> LiveAgreementReport:
    """Agreement of resampled production calls with their originals, per feature."""
    since, _ = _window(since, None)
    rows = agreement_by_feature(session, since, team_scope(caller))
    return LiveAgreementReport(
        since=since,
        data=[
            LiveAgreementOut(feature=f, samples=n, resamples_answered=s, agreement=a)
            for f, n, a, s in rows
        ],
    )
