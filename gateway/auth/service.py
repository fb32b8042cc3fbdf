"""Key management: create, rotate and revoke keys, set their limits, authenticate a key."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from gateway.auth.audit import record_action
from gateway.auth.invalidation.changes import KeyChange, record_change
from gateway.auth.key_terms import KeyTerms
from gateway.auth.keys import (
    DUMMY_HASH,
    DUMMY_SALT,
    KeyInfo,
    generate_key,
    split_key,
    verify_secret,
)
from gateway.auth.scopes import parse_scopes
from gateway.errors import GatewayError
from gateway.governance.budgets.limits import budget_limits
from gateway.governance.budgets.policy import BUDGET_FIELDS, audit_values, check_budgets
from gateway.governance.model_access import ModelAccess
from gateway.governance.model_lists import model_access, model_list
from gateway.retention.classes import retention_class
from plumbline.models import ApiKey, Team
from plumbline.repositories import teams as team_repo

MAX_GRACE_S = 30 * 24 * 3600


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key as shown once to its creator."""

    plaintext: str
    prefix: str
    team: str
    is_admin: bool
    name: str = "default"
    terms: KeyTerms = field(default_factory=KeyTerms)


@dataclass(frozen=True, slots=True)
class Rotation:
    """A rotation: the new key, and when the old one stops working."""

    issued: IssuedKey
    old_prefix: str
    old_revoked_at: datetime


def as_utc(moment: datetime) -> datetime:
    """A stored timestamp as aware UTC (SQLite hands them back naive)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _check_limit(value: int | None, name: str) -> None:
    if value is not None and not 1 <= value <= 1_000_000_000:
        raise GatewayError(400, f"`{name}` must be between 1 and 1000000000 (or null).", name)


def create_key(
    session: Session,
    team_name: str,
    pepper: str,
    *,
    admin: bool = False,
    name: str = "default",
    requests_per_minute: int | None = None,
    tokens_per_minute: int | None = None,
    budgets: dict[str, object] | None = None,
    allowed_models: list[str] | None = None,
    actor: str = "cli",
    terms: KeyTerms | None = None,
) -> IssuedKey:
    """Create a key for a team, creating the team if it is new; audited.

    `terms` (`gateway.auth.key_terms.key_terms`, validated): scopes, expiry, note; without
    them a team key holds inference, read and evals and never expires.
    """
    terms = terms or KeyTerms()
    _check_limit(requests_per_minute, "requests_per_minute")
    _check_limit(tokens_per_minute, "tokens_per_minute")
    budgets = dict(budgets or {})
    if set(budgets) - set(BUDGET_FIELDS):
        raise GatewayError(400, f"Key budgets are {', '.join(BUDGET_FIELDS)}.")
    check_budgets(budgets)
    allowed_models = model_list(allowed_models, admin=admin)
    team = team_repo.team_by_name(session, team_name)
    if team is None:
        team = team_repo.add_team(session, team_name)
        # Gateways may hold "no such team" for admin calls made on its behalf.
        record_change(session, KeyChange(team_id=team.id))
    new = generate_key(pepper)
    team_repo.add_key(
        session,
        team,
        name=name,
        prefix=new.prefix,
        salt=new.salt,
        key_hash=new.key_hash,
        is_admin=admin,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
        **budgets,
        scopes=terms.scopes,
        expires_at=terms.expires_at,
        note=terms.note,
        allowed_models=allowed_models,
    )
    details: dict[str, object] = {
        "admin": admin,
        "name": name,
        **terms.audited(),
        **audit_values(budgets),
    }
    if allowed_models is not None:
        details["allowed_models"] = allowed_models
    record_action(session, actor, "key.create", team_id=team.id, target=new.prefix, details=details)
    return IssuedKey(new.plaintext, new.prefix, team.name, admin, name, terms)


def _usable_key(session: Session, prefix: str, now: datetime) -> tuple[ApiKey, Team]:
    found = team_repo.key_with_team(session, prefix, now)
    if found is None:
        raise GatewayError(404, f"There is no active key with prefix `{prefix[:16]}`.", "prefix")
    return found


def rotate_key(
    session: Session, prefix: str, pepper: str, *, grace_s: int = 0, actor: str = "cli"
) -> Rotation:
    """Issue a new key like the old one (team, admin, scopes, expiry, note, name, limits);
    revoke the old one now, or when `grace_s` seconds have passed so clients can switch over."""
    if not 0 <= grace_s <= MAX_GRACE_S:
        raise GatewayError(400, f"`grace_s` must be between 0 and {MAX_GRACE_S}.", "grace_s")
    now = datetime.now(UTC)
    old, team = _usable_key(session, prefix, now)
    if old.expires_at is not None and as_utc(old.expires_at) <= now:
        raise GatewayError(
            400,
            f"Key `{prefix}` expired at {as_utc(old.expires_at).isoformat(timespec='seconds')}: "
            "a rotation would make an expired key too; create a new one with `--expires`.",
            "prefix",
        )
    new = generate_key(pepper)
    team_repo.add_key(
        session,
        team,
        name=old.name,
        prefix=new.prefix,
        salt=new.salt,
        key_hash=new.key_hash,
        is_admin=old.is_admin,
        requests_per_minute=old.requests_per_minute,
        tokens_per_minute=old.tokens_per_minute,
        budget_day=old.budget_day,
        budget_month=old.budget_month,
        scopes=old.scopes,
        expires_at=old.expires_at,
        note=old.note,
        # The new key may call what the old one could: a rotation never widens access.
        allowed_models=old.allowed_models,
    )
    ends = now + timedelta(seconds=grace_s)
    if old.revoked_at is not None and as_utc(old.revoked_at) < ends:
        ends = as_utc(old.revoked_at)  # already ending sooner
    team_repo.revoke_key(session, prefix, ends, now)
    record_change(session, KeyChange(prefix=prefix))
    record_action(
        session,
        actor,
        "key.rotate",
        team_id=team.id,
        target=prefix,
        details={"new_prefix": new.prefix, "old_revoked_at": ends.isoformat()},
    )
    terms = KeyTerms(old.scopes, old.expires_at, old.note)
    issued = IssuedKey(new.plaintext, new.prefix, team.name, old.is_admin, old.name, terms)
    return Rotation(issued, prefix, ends)


def revoke_key(session: Session, prefix: str, *, actor: str = "cli") -> ApiKey:
    """Revoke a key at once (also one in its grace period); audited."""
    now = datetime.now(UTC)
    key, team = _usable_key(session, prefix, now)
    team_repo.revoke_key(session, prefix, now, now)
    record_change(session, KeyChange(prefix=prefix))
    key.revoked_at = now
    record_action(session, actor, "key.revoke", team_id=team.id, target=prefix)
    return key


def set_key_limits(
    session: Session, prefix: str, values: dict[str, Any], *, actor: str = "cli"
) -> ApiKey:
    """Set (or clear, with None) the given limits, budgets or model list of a key; the others
    stay. Audited."""
    known = {"requests_per_minute", "tokens_per_minute", "allowed_models", *BUDGET_FIELDS}
    unknown = set(values) - known
    if unknown:
        raise GatewayError(400, f"Unknown key settings: {', '.join(sorted(unknown))}.")
    for name in ("requests_per_minute", "tokens_per_minute"):
        value = values.get(name)
        if value is not None and not isinstance(value, int):
            raise GatewayError(400, f"`{name}` must be a whole number (or null).", name)
        _check_limit(value, name)
    check_budgets(values)
    key, team = _usable_key(session, prefix, datetime.now(UTC))
    if "allowed_models" in values:
        values["allowed_models"] = model_list(values["allowed_models"], admin=key.is_admin)
    for name, value in values.items():
        setattr(key, name, value)
    session.flush()
    record_change(session, KeyChange(prefix=prefix))
    record_action(
        session, actor, "key.limits", team_id=team.id, target=prefix, details=audit_values(values)
    )
    return key


def _grants(key: ApiKey, team: Team) -> KeyInfo:
    revokes_at = as_utc(key.revoked_at) if key.revoked_at is not None else None
    return KeyInfo(
        key_id=key.id,
        team_id=team.id,
        team_name=team.name,
        is_admin=key.is_admin,
        store_bodies=team.store_bodies,
        requests_per_minute=team.requests_per_minute,
        tokens_per_minute=team.tokens_per_minute,
        key_requests_per_minute=key.requests_per_minute,
        key_tokens_per_minute=key.tokens_per_minute,
        retention_days=retention_class(team.retention_days),
        prefix=key.prefix,
        revokes_at=revokes_at,
        budget=budget_limits(
            key.budget_day,
            key.budget_month,
            team.budget_day,
            team.budget_month,
            team.budget_soft_fraction,
        ),
        scopes=parse_scopes(key.scopes),
        expires_at=as_utc(key.expires_at) if key.expires_at is not None else None,
        # Admin keys (eval workers, the resampler) call every model; acting for a team, its list.
        models=ModelAccess() if key.is_admin else model_access(team, key),
    )


def authenticate(session: Session, plaintext: str, pepper: str) -> KeyInfo | None:
    """The grants of a presented key, or None if it is unknown, revoked or wrong."""
    parts = split_key(plaintext)
    if parts is None:
        return None
    prefix, secret = parts
    found = team_repo.key_with_team(session, prefix, datetime.now(UTC))
    if found is None:
        verify_secret(secret, DUMMY_SALT, pepper, DUMMY_HASH)
        return None
    key, team = found
    if not verify_secret(secret, key.salt, pepper, key.key_hash):
        return None
    return _grants(key, team)


def team_info(session: Session, name: str) -> KeyInfo | None:
    """A team's policies, for calls an admin key makes on the team's behalf."""
    team = team_repo.team_by_name(session, name)
    if team is None:
        return None
    return KeyInfo(
        key_id=0,
        team_id=team.id,
        team_name=team.name,
        is_admin=False,
        store_bodies=team.store_bodies,
        requests_per_minute=team.requests_per_minute,
        tokens_per_minute=team.tokens_per_minute,
        retention_days=retention_class(team.retention_days),
        models=model_access(team, None),
    )
