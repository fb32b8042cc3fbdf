"""KeyChange: a committed change to what a key may do, announced after its transaction commits.

The services that change keys and teams note each change on their session; a session factory
with a publisher attached (`publish_after_commit`) announces them once the transaction has
committed, and drops them if it rolls back, so no path that goes through the services forgets.
A message names a key by its prefix or a team by its id: never a secret.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)
_PENDING = "plumbline.key_changes"
_ATTACHED = "plumbline.key_changes.attached"
# A message longer than this is not one of ours: it is not parsed.
MAX_MESSAGE_BYTES = 256


@dataclass(frozen=True, slots=True)
class KeyChange:
    """One key (by prefix) or all of one team's keys (by team id) may grant less than before."""

    prefix: str | None = None
    team_id: int | None = None

    def encode(self) -> bytes:
        """The message sent on the channel."""
        if self.prefix is not None:
            return json.dumps({"key": self.prefix}).encode()
        return json.dumps({"team": self.team_id}).encode()


def decode_change(data: bytes) -> KeyChange | None:
    """The change a message names, or None if unreadable (the cache then drops everything)."""
    if len(data) > MAX_MESSAGE_BYTES:
        return None
    try:
        body = json.loads(data)
    except ValueError:
        return None
    if not isinstance(body, dict) or len(body) != 1:
        return None
    prefix, team = body.get("key"), body.get("team")
    if isinstance(prefix, str) and 0 < len(prefix) <= 64:
        return KeyChange(prefix=prefix)
    if isinstance(team, int) and not isinstance(team, bool):
        return KeyChange(team_id=team)
    return None


def record_change(session: Session, change: KeyChange) -> None:
    """Note a change to announce once `session`'s transaction commits."""
    if not session.info.get(_ATTACHED):
        log.debug("key change on a session without a publisher: other processes see it by TTL")
    session.info.setdefault(_PENDING, []).append(change)


def publish_after_commit(
    sessions: sessionmaker[Session], publish: Callable[[Sequence[KeyChange]], None]
) -> None:
    """Announce the changes noted on sessions of `sessions` after each commit (`publish` must not
    raise: the transaction is already committed)."""
    sessions.kw.setdefault("info", {})[_ATTACHED] = True

    def committed(session: Session) -> None:
        changes = session.info.pop(_PENDING, None)
        if changes:
            publish(tuple(dict.fromkeys(changes)))

    def rolled_back(session: Session) -> None:
        session.info.pop(_PENDING, None)

    event.listen(sessions, "after_commit", committed)
    event.listen(sessions, "after_rollback", rolled_back)
