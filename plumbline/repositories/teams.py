"""SQL for teams and API keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
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


def list_teams(session: Session) -> list[Team]:
    """Every team, by name."""
    return list(session.scalars(select(Team).order_by(Team.name)))


def update_team(session: Session, team: Team, values: dict[str, Any]) -> None:
    """Set a team's policy columns."""
    for name, value in values.items():
        setattr(team, name, value)
    session.flush()


def add_key(session: Session, team: Team, **columns: Any) -> ApiKey:
    """Insert a key row (hash only)."""
    key = ApiKey(team_id=team.id, **columns)
    session.add(key)
    session.flush()
    return key


def _usable(now: datetime) -> Any:
    return or_(ApiKey.revoked_at.is_(None), ApiKey.revoked_at > now)


def key_with_team(session: Session, prefix: str, now: datetime) -> tuple[ApiKey, Team] | None:
    """A key usable at `now` (not revoked, or in its grace period) by its prefix, with its team."""
    row = session.execute(
        select(ApiKey, Team)
        .join(Team, Team.id == ApiKey.team_id)
        .where(ApiKey.prefix == prefix, _usable(now))
    ).first()
    return (row[0], row[1]) if row else None


def revoke_key(session: Session, prefix: str, at: datetime, now: datetime) -> bool:
    """Revoke a usable key at `at` (now, or the end of a grace period); False if none."""
    result = session.execute(
        update(ApiKey)
        .where(ApiKey.prefix == prefix, _usable(now))
        .values(revoked_at=at)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def list_keys(session: Session, team_id: int | None = None) -> list[tuple[ApiKey, Team]]:
    """Every key with its team (or one team's), newest first."""
    query = select(ApiKey, Team).join(Team, Team.id == ApiKey.team_id)
    if team_id is not None:
        query = query.where(ApiKey.team_id == team_id)
    rows = session.execute(query.order_by(ApiKey.id.desc())).all()
    return [(row[0], row[1]) for row in rows]
