"""SQL for the stability report: how often each feature's answers hinge on a near tie."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Float, Integer, case, func, select
from sqlalchemy.orm import Session

from plumbline.models import Call


@dataclass(frozen=True, slots=True)
class NearTieRow:
    """One feature's calls with logprobs, and how many had a near tie somewhere in the answer."""

    feature: str | None
    calls: int
    near_tie_calls: int
    near_tie_share: float
    mean_near_ties: float
    mean_min_margin: float | None
    min_margin: float | None


def near_tie_features(
    session: Session,
    team_id: int | None,
    since: datetime,
    until: datetime,
    *,
    min_calls: int = 1,
    limit: int = 50,
    source: str | None = "product",
) -> list[NearTieRow]:
    """Features ranked by the share of their answers that passed a near-tie token.

    Uses only what every call already carries (near_ties, logprob_min_margin): no extra calls.
    """
    tied = func.sum(case((Call.near_ties > 0, 1), else_=0), type_=Integer)
    query = (
        select(
            Call.feature,
            func.count().label("calls"),
            tied.label("tied"),
            func.avg(func.cast(Call.near_ties, Float)).label("mean_ties"),
            func.avg(Call.logprob_min_margin).label("mean_margin"),
            func.min(Call.logprob_min_margin).label("min_margin"),
        )
        .where(
            Call.created_at >= since,
            Call.created_at < until,
            Call.near_ties.is_not(None),
            Call.status_code < 400,
        )
        .group_by(Call.feature)
        .having(func.count() >= min_calls)
    )
    if team_id is not None:
        query = query.where(Call.team_id == team_id)
    if source is not None:
        query = query.where(Call.source == source)
    rows = [
        NearTieRow(
            feature=row.feature,
            calls=int(row.calls),
            near_tie_calls=int(row.tied or 0),
            near_tie_share=int(row.tied or 0) / int(row.calls),
            mean_near_ties=float(row.mean_ties or 0.0),
            mean_min_margin=float(row.mean_margin) if row.mean_margin is not None else None,
            min_margin=float(row.min_margin) if row.min_margin is not None else None,
        )
        for row in session.execute(query).all()
    ]
    rows.sort(key=lambda r: (-r.near_tie_share, -r.near_tie_calls, r.feature or ""))
    return rows[:limit]
