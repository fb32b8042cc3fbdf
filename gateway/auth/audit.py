"""SQL for the audit log: append an entry, read entries back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from plumbline.models import AuditEntry


def record_action(
    session: Session,
    actor: str,
    action: str,
    *,
    team_id: int | None = None,
    target: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append an entry; it commits with the change it describes."""
    entry = AuditEntry(
        actor=actor[:160],
        action=action,
        team_id=team_id,
        target=target[:256] if target else None,
        details=details or {},
    )
    session.add(entry)
    session.flush()
    return entry


def audit_entries(session: Session, action: str | None, limit: int) -> list[AuditEntry]:
    """Newest entries first, optionally of one action."""
    query = select(AuditEntry)
    if action is not None:
        query = query.where(AuditEntry.action == action)
    return list(session.scalars(query.order_by(AuditEntry.id.desc()).limit(limit)))
