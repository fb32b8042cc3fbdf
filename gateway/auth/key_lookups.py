"""KeyLookups: the database questions the key cache asks, as a protocol the auth service meets.

The key cache sits on the proxy's import graph; naming the lookups here instead of importing the
auth service keeps the ORM models out of that graph (the import contracts in pyproject.toml).
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.orm import Session

from gateway.auth.keys import KeyInfo


class KeyLookups(Protocol):
    """Resolves keys and teams in the database (`gateway.auth.service` is the one in use)."""

    def authenticate(self, session: Session, plaintext: str, pepper: str) -> KeyInfo | None:
        """The grants of a presented key, or None if it is unknown, revoked or wrong."""
        ...

    def team_info(self, session: Session, name: str) -> KeyInfo | None:
        """A team's policies, for calls an admin key makes on the team's behalf."""
        ...
