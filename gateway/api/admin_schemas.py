"""Request and response models of the admin API under /api/admin (admin keys only)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from gateway.auth.service import MAX_GRACE_S
from gateway.governance.model_access import MAX_PATTERN_CHARS, MAX_PATTERNS
from gateway.retention.classes import MAX_TOPK_DAYS

Limit = Annotated[int | None, Field(ge=1, le=1_000_000_000)]
# A spend budget in the price currency (checked exactly by gateway.governance.budgets.policy).
Budget = Annotated[float | None, Field(ge=0, le=1e12, strict=True)]
PrefixPath = Annotated[str, Path(min_length=10, max_length=10, pattern="^[0-9a-f]+$")]
TeamName = Annotated[str, Field(min_length=1, max_length=128)]
TeamPath = Annotated[str, Path(min_length=1, max_length=128)]
# Model names or fnmatch patterns (null: every configured model); contents checked by the service.
ModelList = Annotated[
    list[Annotated[str, Field(max_length=MAX_PATTERN_CHARS)]] | None,
    Field(max_length=MAX_PATTERNS),
]


class _In(BaseModel):
    """Request bodies refuse unknown fields, so a typo is a 400 rather than ignored."""

    model_config = ConfigDict(extra="forbid")


class KeyCreate(_In):
    """A new key; its team is created if it does not exist."""

    team: TeamName
    name: Annotated[str, Field(min_length=1, max_length=128)] = "default"
    admin: bool = False
    requests_per_minute: Limit = None
    tokens_per_minute: Limit = None
    budget_day: Budget = None
    budget_month: Budget = None
    # Checked by the service (clear 400s); left out: inference, read and evals, no expiry.
    scopes: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=8)] | None = None
    expires: Annotated[str, Field(max_length=64)] | None = None
    note: Annotated[str, Field(max_length=2000)] | None = None
    allowed_models: ModelList = None


class KeyLimits(_In):
    """A key's own limits and models: fields sent change, null clears one (the team's applies)."""

    requests_per_minute: Limit = None
    tokens_per_minute: Limit = None
    budget_day: Budget = None
    budget_month: Budget = None
    allowed_models: ModelList = None


class RotateIn(_In):
    """How long the old key keeps working after the new one is issued."""

    grace_s: Annotated[int, Field(ge=0, le=MAX_GRACE_S)] = 0


class KeyOut(BaseModel):
    """A key as listed: never its secret or hash."""

    prefix: str
    team: str
    name: str
    admin: bool
    state: str
    created_at: datetime | None
    revoked_at: datetime | None
    requests_per_minute: int | None
    tokens_per_minute: int | None
    budget_day: float | None = None
    budget_month: float | None = None
    scopes: list[str]
    expires_at: datetime | None
    last_used_at: datetime | None
    note: str | None
    allowed_models: list[str] | None = None


class KeyList(BaseModel):
    """Keys, newest first."""

    data: list[KeyOut]


class IssuedKeyOut(BaseModel):
    """A new key: `key` is shown this once."""

    key: str
    prefix: str
    team: str
    name: str
    admin: bool
    scopes: list[str]
    expires_at: datetime | None


class RotationOut(BaseModel):
    """The new key of a rotation, and when the old one stops working."""

    key: str
    prefix: str
    team: str
    old_prefix: str
    old_revoked_at: datetime


class TeamPolicy(_In):
    """Team settings to change; fields left out keep their value."""

    requests_per_minute: Limit = None
    tokens_per_minute: Limit = None
    store_bodies: bool | None = None
    retention_days: Annotated[int | None, Field(ge=0, le=730)] = None
    budget_day: Budget = None
    budget_month: Budget = None
    budget_soft_fraction: Annotated[float | None, Field(gt=0, le=1)] = None
    allowed_models: ModelList = None
    topk_retention_days: Annotated[int | None, Field(ge=0, le=MAX_TOPK_DAYS)] = None


class TeamOut(BaseModel):
    """A team and its policies."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    store_bodies: bool
    retention_days: int | None
    topk_retention_days: int | None = None
    requests_per_minute: int | None
    tokens_per_minute: int | None
    budget_day: float | None = None
    budget_month: float | None = None
    budget_soft_fraction: float | None = None
    allowed_models: list[str] | None = None


class TeamList(BaseModel):
    """Teams by name."""

    data: list[TeamOut]


class EndUserDeletion(_In):
    """Delete everything recorded about one end user (the X-Plumbline-User value) of a team."""

    team: TeamName
    end_user: Annotated[str, Field(min_length=1, max_length=256)]


class DeletionOut(BaseModel):
    """What was deleted; the audit entry keeps a keyed hash of the end-user id."""

    team: str
    end_user_digest: str
    deleted_rows: dict[str, int]
    eval_samples_cleared: int
    audit_id: int


class RetentionOut(BaseModel):
    """What one retention pass removed."""

    dropped_partitions: list[str]
    deleted_rows: dict[str, int]
    skipped_partitions: list[str]


class AuditOut(BaseModel):
    """One audit log entry."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    created_at: datetime | None
    actor: str
    action: str
    team_id: int | None
    target: str | None
    details: dict[str, Any]


class AuditList(BaseModel):
    """Audit entries, newest first."""

    data: list[AuditOut]
