"""SQL of the data lifecycle: list and drop partitions, delete expired or one user's rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, delete, select, text, tuple_, update
from sqlalchemy.orm import Session

from gateway.recording.partitions import PARTITIONED_TABLES
from plumbline.models import Call, CallBody, CallLogprobs, EvalSample, LiveSample, Team

CHILD_TABLES = (CallLogprobs, CallBody)


def call_partitions(session: Session) -> list[tuple[str, bool]]:
    """(name, has partitions of its own) of every partition of the call tables."""
    rows = session.execute(
        text(
            "SELECT c.relname, c.relkind = 'p' FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent "
            "WHERE p.relname = ANY(:tables) OR p.relname LIKE ANY(:days)"
        ),
        {
            "tables": list(PARTITIONED_TABLES),
            "days": [f"{t}\\_p%" for t in PARTITIONED_TABLES],
        },
    )
    return [(row[0], bool(row[1])) for row in rows]


def children_left(session: Session, parent: str) -> int:
    """How many partitions a day partition still holds."""
    return int(
        session.scalar(
            text(
                "SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent "
                "WHERE p.relname = :parent"
            ),
            {"parent": parent},
        )
        or 0
    )


def drop_partition(session: Session, name: str, lock_timeout_ms: int) -> None:
    """Drop one partition, giving up (with an error) rather than queueing behind long readers."""
    session.execute(text(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}"))
    session.execute(text(f'DROP TABLE IF EXISTS "{name}"'))


def classes_in_use(session: Session) -> list[int]:
    """Retention classes the calls table holds rows of (SQLite: no partitions to list)."""
    return list(session.scalars(select(Call.retention_days).distinct()))


def delete_class_before(session: Session, retention_days: int, cutoff: datetime) -> int:
    """Delete the rows of one retention class older than `cutoff`; calls deleted."""
    for model in CHILD_TABLES:
        session.execute(
            delete(model).where(model.retention_days == retention_days, model.created_at < cutoff)
        )
    result = session.execute(
        delete(Call).where(Call.retention_days == retention_days, Call.created_at < cutoff)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def teams_with_retention(session: Session) -> list[tuple[int, str, int]]:
    """(id, name, days) of every team that set a retention period."""
    rows = session.execute(
        select(Team.id, Team.name, Team.retention_days).where(Team.retention_days > 0)
    )
    return [(row[0], row[1], int(row[2] or 0)) for row in rows]


def teams_with_topk_retention(session: Session) -> list[tuple[int, int]]:
    """(id, days) of every team that keeps top-k alternatives for a shorter period."""
    rows = session.execute(
        select(Team.id, Team.topk_retention_days).where(Team.topk_retention_days > 0)
    )
    return [(row[0], int(row[1] or 0)) for row in rows]


def drop_team_topk_before(session: Session, team_id: int, cutoff: datetime) -> int:
    """Null the top-k payload of a team's logprob rows older than `cutoff`; rows changed.

    The sampled payload stays as it is: on Postgres an update keeps unchanged TOASTed values.
    """
    result = session.execute(
        update(CallLogprobs)
        .where(
            CallLogprobs.team_id == team_id,
            CallLogprobs.created_at < cutoff,
            CallLogprobs.topk.is_not(None),
        )
        .values(topk=None)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def _delete_calls_where(session: Session, condition: ColumnElement[bool]) -> dict[str, int]:
    """Delete calls matching `condition` with their logprobs, bodies and live samples."""
    keys = select(Call.id, Call.created_at, Call.retention_days).where(condition)
    ids = select(Call.id).where(condition)
    counts = {}
    for model in CHILD_TABLES:
        result = session.execute(
            delete(model).where(
                tuple_(model.call_id, model.created_at, model.retention_days).in_(keys)
            )
        )
        counts[model.__tablename__] = int(result.rowcount)  # type: ignore[attr-defined]
    live = session.execute(delete(LiveSample).where(LiveSample.call_id.in_(ids)))
    counts["live_samples"] = int(live.rowcount)  # type: ignore[attr-defined]
    result = session.execute(delete(Call).where(condition))
    counts["calls"] = int(result.rowcount)  # type: ignore[attr-defined]
    return counts


def delete_team_calls_before(session: Session, team_id: int, cutoff: datetime) -> dict[str, int]:
    """Rows of a team older than its retention that partitions did not take (rows per table).

    After the partition drops these are few: rows written under a longer class before the team
    shortened its retention, and rows in day partitions made before classes existed.
    """
    condition = (Call.team_id == team_id) & (Call.created_at < cutoff)
    counts = _delete_calls_where(session, condition)
    # Samples of calls already dropped with their partition go by their own date.
    live = session.execute(
        delete(LiveSample).where(LiveSample.team_id == team_id, LiveSample.created_at < cutoff)
    )
    counts["live_samples"] += int(live.rowcount)  # type: ignore[attr-defined]
    return counts


def end_user_call_ids(session: Session, team_id: int, end_user: str) -> list[str]:
    """Ids of every call a team made for one end user."""
    query = select(Call.id).where(Call.team_id == team_id, Call.end_user == end_user)
    return list(session.scalars(query))


def delete_end_user_calls(session: Session, team_id: int, end_user: str) -> dict[str, int]:
    """Delete an end user's calls, logprobs, bodies and live samples (rows per table)."""
    condition = (Call.team_id == team_id) & (Call.end_user == end_user)
    counts = _delete_calls_where(session, condition)
    bodies = session.execute(
        delete(CallBody).where(CallBody.team_id == team_id, CallBody.end_user == end_user)
    )
    counts["call_bodies"] += int(bodies.rowcount)  # type: ignore[attr-defined]
    return counts


def forget_eval_texts(session: Session, call_ids: Sequence[str]) -> int:
    """Clear the answer text and call link of eval samples made by these calls."""
    total = 0
    for start in range(0, len(call_ids), 500):
        chunk = list(call_ids[start : start + 500])
        result = session.execute(
            update(EvalSample).where(EvalSample.call_id.in_(chunk)).values(text=None, call_id=None)
        )
        total += int(result.rowcount)  # type: ignore[attr-defined]
    return total
