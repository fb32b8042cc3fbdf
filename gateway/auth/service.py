"""Key management: create teams and keys, revoke and rotate, authenticate a presented key."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from gateway.auth import repository
from gateway.auth.keys import KeyInfo, generate_key, split_key, verify_secret


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key as shown once to its creator."""

    plaintext: str
    prefix: str
    team: str
    is_admin: bool


def create_key(
    session: Session, team_name: str, pepper: str, *, admin: bool = False, name: str = "default"
) -> IssuedKey:
    """Create a key for a team, creating the team if it is new."""
    team = repository.team_by_name(session, team_name) or repository.add_team(session, team_name)
    new = generate_key(pepper)
    repository.add_key(
        session,
        team,
        name=name,
        prefix=new.prefix,
        salt=new.salt,
        key_hash=new.key_hash,
        admin=admin,
    )
    return IssuedKey(new.plaintext, new.prefix, team.name, admin)


def authenticate(session: Session, plaintext: str, pepper: str) -> KeyInfo | None:
    """The grants of a presented key, or None if it is unknown, revoked or wrong."""
    parts = split_key(plaintext)
    if parts is None:
        return None
    prefix, secret = parts
    found = repository.key_with_team(session, prefix)
    if found is None:
        return None
    key, team = found
    if not verify_secret(secret, key.salt, pepper, key.key_hash):
        return None
    return KeyInfo(
        key_id=key.id,
        team_id=team.id,
        team_name=team.name,
        is_admin=key.is_admin,
        store_bodies=team.store_bodies,
        requests_per_minute=team.requests_per_minute,
        tokens_per_minute=team.tokens_per_minute,
    )


def team_info(session: Session, name: str) -> KeyInfo | None:
    """A team's policies, for calls an admin key makes on the team's behalf."""
    team = repository.team_by_name(session, name)
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
    )
