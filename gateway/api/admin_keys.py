"""Routes: create, list, rotate, revoke keys and set their limits and models (admin keys only).

Each change commits in its own transaction and then clears this gateway's key cache, so a
revoked key stops working here at once; other processes and replicas within about a second
with key_invalidation.channel `redis`, else within limits.key_cache_ttl_s (docs/security.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, status

from gateway.api.admin_schemas import (
    IssuedKeyOut,
    KeyCreate,
    KeyLimits,
    KeyList,
    KeyOut,
    PrefixPath,
    RotateIn,
    RotationOut,
)
from gateway.api.deps import AdminDep, StateDep
from gateway.auth import service
from gateway.auth.key_terms import key_terms
from gateway.auth.scopes import listed_scopes
from gateway.auth.service import as_utc
from plumbline.models import ApiKey, Team
from plumbline.repositories import teams as team_repo

router = APIRouter(prefix="/api/admin/keys", tags=["admin"])


def key_out(key: ApiKey, team: Team, now: datetime) -> KeyOut:
    """A key row as listed."""
    if key.revoked_at is not None and as_utc(key.revoked_at) <= now:
        state = "revoked"
    elif key.expires_at is not None and as_utc(key.expires_at) <= now:
        state = "expired"
    else:
        state = "active" if key.revoked_at is None else "revoking"
    return KeyOut(
        prefix=key.prefix,
        team=team.name,
        name=key.name,
        admin=key.is_admin,
        state=state,
        created_at=key.created_at,
        revoked_at=key.revoked_at,
        requests_per_minute=key.requests_per_minute,
        tokens_per_minute=key.tokens_per_minute,
        budget_day=float(key.budget_day) if key.budget_day is not None else None,
        budget_month=float(key.budget_month) if key.budget_month is not None else None,
        scopes=listed_scopes(key.scopes, admin=key.is_admin),
        expires_at=as_utc(key.expires_at) if key.expires_at else None,
        last_used_at=as_utc(key.last_used_at) if key.last_used_at else None,
        note=key.note,
        allowed_models=key.allowed_models,
    )


@router.get("", response_model=KeyList)
def list_keys(
    caller: AdminDep,
    state: StateDep,
    team: Annotated[str | None, Query(max_length=128)] = None,
) -> KeyList:
    """Every key (or one team's), newest first; secrets are never stored or shown."""
    now = datetime.now(UTC)
    with state.sessions() as session:
        team_id = None
        if team is not None:
            row = team_repo.team_by_name(session, team)
            if row is None:
                return KeyList(data=[])
            team_id = row.id
        rows = team_repo.list_keys(session, team_id)
        return KeyList(data=[key_out(k, t, now) for k, t in rows])


@router.post("", response_model=IssuedKeyOut, status_code=status.HTTP_201_CREATED)
def create_key(body: KeyCreate, caller: AdminDep, state: StateDep) -> IssuedKeyOut:
    """Create a key (and its team if new); the plaintext is in this response only."""
    now = datetime.now(UTC)
    terms = key_terms(body.scopes, body.expires, body.note, admin=body.admin, now=now)
    with state.sessions() as session, session.begin():
        issued = service.create_key(
            session,
            body.team,
            state.settings.key_salt.get_secret_value(),
            admin=body.admin,
            name=body.name,
            requests_per_minute=body.requests_per_minute,
            tokens_per_minute=body.tokens_per_minute,
            budgets=body.model_dump(include={"budget_day", "budget_month"}, exclude_none=True),
            allowed_models=body.allowed_models,
            actor=caller.actor,
            terms=terms,
        )
    return IssuedKeyOut(
        key=issued.plaintext,
        prefix=issued.prefix,
        team=issued.team,
        name=issued.name,
        admin=issued.is_admin,
        scopes=listed_scopes(terms.scopes, admin=issued.is_admin),
        expires_at=terms.expires_at,
    )


@router.post("/{prefix}/rotate", response_model=RotationOut)
def rotate_key(
    prefix: PrefixPath, caller: AdminDep, state: StateDep, body: RotateIn | None = None
) -> RotationOut:
    """Issue a new key for the same team and revoke the old one, now or after `grace_s`."""
    grace_s = body.grace_s if body else 0
    with state.sessions() as session, session.begin():
        rotation = service.rotate_key(
            session,
            prefix,
            state.settings.key_salt.get_secret_value(),
            grace_s=grace_s,
            actor=caller.actor,
        )
    state.keys.forget_all()
    return RotationOut(
        key=rotation.issued.plaintext,
        prefix=rotation.issued.prefix,
        team=rotation.issued.team,
        old_prefix=rotation.old_prefix,
        old_revoked_at=rotation.old_revoked_at,
    )


@router.post("/{prefix}/revoke", response_model=KeyOut)
def revoke_key(prefix: PrefixPath, caller: AdminDep, state: StateDep) -> KeyOut:
    """Revoke a key at once; this gateway's cache is cleared, so its next call is a 401."""
    with state.sessions() as session, session.begin():
        key = service.revoke_key(session, prefix, actor=caller.actor)
        team = session.get(Team, key.team_id)
        assert team is not None
        out = key_out(key, team, datetime.now(UTC))
    state.keys.forget_all()
    return out


@router.patch("/{prefix}", response_model=KeyOut)
def set_key_limits(
    prefix: PrefixPath, body: KeyLimits, caller: AdminDep, state: StateDep
) -> KeyOut:
    """Set the limits or model list sent (null clears one: the team's applies); others stay."""
    values = body.model_dump(include=body.model_fields_set)
    with state.sessions() as session, session.begin():
        key = service.set_key_limits(session, prefix, values, actor=caller.actor)
        team = session.get(Team, key.team_id)
        assert team is not None
        out = key_out(key, team, datetime.now(UTC))
    state.keys.forget_all()
    return out
