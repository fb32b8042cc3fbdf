"""SQL for API keys' bookkeeping: when each was last used."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, or_, update
from sqlalchemy.orm import Session

from plumbline.models import ApiKey


def record_last_used(session: Session, uses: dict[int, datetime]) -> int:
    """One UPDATE per key; a key's time only moves forward (another process may be ahead)."""
    if not uses:
        return 0
    statement = (
        update(ApiKey)
        .where(
            ApiKey.id == bindparam("key_id"),
            or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at < bindparam("used_at")),
        )
        .values(last_used_at=bindparam("used_at"))
    )
    rows = [{"key_id": key_id, "used_at": used} for key_id, used in uses.items()]
    # On the connection: one statement run for every key (executemany), not the ORM's
    # bulk-by-primary-key path, which would drop the "only forward" condition.
    session.connection().execute(statement, rows)
    return len(rows)
