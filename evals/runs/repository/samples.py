"""SQL for samples: insert a run's slots, claim them, store answers, read a run's samples."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.orm import Session

from plumbline.models import EvalSample

UNFINISHED = ("pending", "running", "failed")


def insert_samples(session: Session, rows: Iterable[dict[str, Any]]) -> None:
    """Insert sample slots in one executemany."""
    batch = list(rows)
    if batch:
        session.execute(insert(EvalSample), batch)


def samples_by_ids(session: Session, ids: Collection[int]) -> list[EvalSample]:
    """Samples by id, in id order."""
    if not ids:
        return []
    query = select(EvalSample).where(EvalSample.id.in_(list(ids))).order_by(EvalSample.id)
    return list(session.scalars(query))


def unfinished_ids(session: Session, run_id: int) -> list[int]:
    """Ids of a run's samples that have no answer yet (pending, abandoned or failed)."""
    query = select(EvalSample.id).where(
        EvalSample.run_id == run_id, EvalSample.status.in_(UNFINISHED)
    )
    return list(session.scalars(query.order_by(EvalSample.id)))


def claim_many(
    session: Session, ids: Collection[int], now: datetime, lease_expired_before: datetime
) -> set[int]:
    """Mark samples running unless done, rejected or held by a live claim; the ids claimed."""
    if not ids:
        return set()
    result = session.execute(
        update(EvalSample)
        .where(
            EvalSample.id.in_(list(ids)),
            or_(
                EvalSample.status.in_(("pending", "failed")),
                and_(
                    EvalSample.status == "running",
                    or_(
                        EvalSample.claimed_at.is_(None),
                        EvalSample.claimed_at < lease_expired_before,
                    ),
                ),
            ),
        )
        .values(status="running", claimed_at=now, attempts=EvalSample.attempts + 1)
        .returning(EvalSample.id)
        .execution_options(synchronize_session=False)
    )
    return set(result.scalars())


def renew_claims(session: Session, ids: Collection[int], now: datetime) -> None:
    """Refresh the claims a live worker still holds, so their lease does not run out."""
    session.execute(
        update(EvalSample)
        .where(EvalSample.id.in_(list(ids)), EvalSample.status == "running")
        .values(claimed_at=now)
    )


def release_running(session: Session, run_id: int) -> int:
    """Put a run's claimed-but-unfinished samples back to pending (after a crash)."""
    result = session.execute(
        update(EvalSample)
        .where(EvalSample.run_id == run_id, EvalSample.status == "running")
        .values(status="pending", claimed_at=None)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def finish_many(session: Session, rows: list[dict[str, Any]]) -> None:
    """Store samples' outcomes: each row is an `id` and its values (status, text, call id...)."""
    _update_by_id(session, rows)


def samples_of_run(session: Session, run_id: int) -> list[EvalSample]:
    """Every sample of a run in slot order."""
    query = select(EvalSample).where(EvalSample.run_id == run_id)
    order = (EvalSample.question_id, EvalSample.paraphrase_index, EvalSample.sample_index)
    return list(session.scalars(query.order_by(*order)))


def status_counts(session: Session, run_id: int) -> dict[str, int]:
    """Samples of a run per status."""
    rows = session.execute(
        select(EvalSample.status, func.count())
        .where(EvalSample.run_id == run_id)
        .group_by(EvalSample.status)
    ).all()
    return {str(status): int(n) for status, n in rows}


def set_answer_keys(session: Session, keys: dict[int, tuple[str | None, str | None]]) -> None:
    """Store each sample's answer key and parse error, as scoring assigned them."""
    rows = [{"id": i, "answer_key": key, "parse_error": error} for i, (key, error) in keys.items()]
    _update_by_id(session, rows)


def _update_by_id(session: Session, rows: list[dict[str, Any]]) -> None:
    # An UPDATE by primary key with a list of rows: one executemany, pipelined by the driver,
    # not a statement and a round trip per sample.
    if rows:
        session.execute(update(EvalSample), rows)
