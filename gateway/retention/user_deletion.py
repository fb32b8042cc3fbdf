"""Delete everything recorded about one end user of one team, and keep proof that it was done.

The audit entry holds a keyed hash of the end-user id rather than the id itself, so the
request can be matched later without the log keeping what was deleted.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from sqlalchemy.orm import Session

from gateway.auth.audit import record_action
from gateway.errors import GatewayError
from gateway.retention import repository
from plumbline.repositories import teams as auth_repo


@dataclass(frozen=True, slots=True)
class UserDeletion:
    """What a deletion removed, and the audit entry that records it."""

    team: str
    end_user_digest: str
    deleted_rows: dict[str, int]
    eval_samples_cleared: int
    audit_id: int


def end_user_digest(team_id: int, end_user: str, pepper: str) -> str:
    """Keyed hash of a team's end-user id, as kept in the audit log."""
    message = f"{team_id}:{end_user}".encode()
    return hmac.new(pepper.encode(), message, hashlib.sha256).hexdigest()[:32]


def delete_end_user(
    session: Session, team_name: str, end_user: str, pepper: str, *, actor: str
) -> UserDeletion:
    """Delete an end user's calls, logprobs, bodies and live samples; clear eval answer texts."""
    if not end_user or len(end_user) > 256:
        raise GatewayError(400, "`end_user` must be 1 to 256 characters.", "end_user")
    team = auth_repo.team_by_name(session, team_name)
    if team is None:
        raise GatewayError(404, f"No team named `{team_name[:128]}`.", "team")
    call_ids = repository.end_user_call_ids(session, team.id, end_user)
    cleared = repository.forget_eval_texts(session, call_ids)
    counts = repository.delete_end_user_calls(session, team.id, end_user)
    digest = end_user_digest(team.id, end_user, pepper)
    entry = record_action(
        session,
        actor,
        "end_user.delete",
        team_id=team.id,
        target=digest,
        details={"deleted_rows": counts, "eval_samples_cleared": cleared},
    )
    return UserDeletion(team.name, digest, counts, cleared, entry.id)
