"""SQL for teams and API keys."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from plumbline.models import ApiKey, Team


def team_by_name(session: Session, name: str) -> Team | None:
    """The team with this name."""
    return session.scalar(select(Team).where(Team.name == name))


def add_team(session: Session, name: str) -> Team:
    """Insert a team."""
    team = Team(name=name)
    session.add(team)
    session.flush()
    return team


def add_key(
    session: Session, team: Team, *, name: str, prefix: str, salt: str, key_hash: str, admin: bool
) -> ApiKey:
    """Insert a key row (hash only)."""
    key = ApiKey(
        team_id=team.id, name=name, prefix=prefix, salt=salt, key_hash=key_hash, is_admin=admin
    )
    session.add(key)
    session.flush()
    return key


def key_with_team(session: Session, prefix: str) -> tuple[ApiKey, Team] | None:
    """An active key by its prefix, with its team."""
    row = session.execute(
        select(ApiKey, Team)
        .join(Team, Team.id == ApiKey.team_id)
        .where(ApiKey.prefix == prefix, ApiKey.revoked_at.is_(None))
    ).first()
    return (row[0], row[1]) if row else None


def revoke_key(session: Session, prefix: str) -> bool:
    """Mark a key revoked; False if no active key has this prefix."""
    result = session.execute(
        update(ApiKey)
        .where(ApiKey.prefix == prefix, ApiKey.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def list_keys(session: Session) -> list[tuple[ApiKey, Team]]:
    """Every key with its team, newest first."""
    rows = session.execute(
        select(ApiKey, Team).join(Team, Team.id == ApiKey.team_id).order_by(ApiKey.id.desc())
    ).all()
    return [(row[0], row[1]) for row in rows]
