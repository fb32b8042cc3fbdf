"""Request bodies and list envelopes of /api/alerts, response models of /api/stability."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from evals.alerts.views import AlertView


class AlertList(BaseModel):
    """Alerts visible to the caller."""

    data: list[AlertView]


class AckIn(BaseModel):
    """Who acknowledges (default: the caller's key)."""

    by: str | None = Field(default=None, min_length=1, max_length=128)


class NearTieOut(BaseModel):
    """A feature's calls and how often their answer passed through a near tie."""

    feature: str | None
    calls: int
    near_tie_calls: int
    near_tie_share: float
    mean_near_ties: float
    mean_min_margin: float | None
    min_margin: float | None
    live_agreement: float | None = None


class NearTieReport(BaseModel):
    """Features ranked by near-tie share."""

    since: datetime
    until: datetime
    data: list[NearTieOut]


class LiveAgreementOut(BaseModel):
    """Agreement of resampled production calls with their original answers."""

    feature: str
    samples: int
    resamples_answered: int
    agreement: float


class LiveAgreementReport(BaseModel):
    """Live agreement per feature."""

    since: datetime
    data: list[LiveAgreementOut]
