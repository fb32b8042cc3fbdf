"""OwnerRepository: all SQL on `response_owners`."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from gateway.response_owners.owners import StoredOwner
from plumbline.models.response_owner import ResponseOwner


class OwnerRepository:
    """The owner rows of stored responses (meets `owners.OwnerQueries`)."""

    def count_for_team(self, session: Session, team_id: int, model: str) -> int:
        """How many responses of `model` the team has stored."""
        query = select(func.count()).where(
            ResponseOwner.team_id == team_id, ResponseOwner.model == model
        )
        return int(session.scalar(query) or 0)

    def insert(self, session: Session, owner: StoredOwner, settled: bool) -> None:
        """Add the owner row of a response vLLM has just stored."""
        session.add(
            ResponseOwner(
                response_id=owner.response_id,
                team_id=owner.team_id,
                model=owner.model,
                backend=owner.backend,
                background=owner.background,
                added_top_logprobs=owner.added_top_logprobs,
                settled_at=datetime.now(UTC) if settled else None,
            )
        )
        session.flush()

    def find(self, session: Session, response_id: str) -> StoredOwner | None:
        """The owner of a response, or None."""
        row = session.get(ResponseOwner, response_id)
        if row is None:
            return None
        return StoredOwner(
            response_id=row.response_id,
            team_id=row.team_id,
            model=row.model,
            backend=row.backend,
            background=row.background,
            added_top_logprobs=row.added_top_logprobs,
        )

    def settle(self, session: Session, response_id: str) -> bool:
        """Mark the usage recorded, once: True only for the call whose update took."""
        result = session.execute(
            update(ResponseOwner)
            .where(ResponseOwner.response_id == response_id, ResponseOwner.settled_at.is_(None))
            .values(settled_at=datetime.now(UTC))
        )
        return bool(getattr(result, "rowcount", 0))
