"""SQL for the logprob vocabulary: ids of token keys, keys of ids, new keys added once."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import TypeVar

from sqlalchemy import Connection, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from plumbline.models import LogprobVocab

# Values per IN list or insert: well below SQLite's 32,766 bound variables and Postgres's 65,535.
CHUNK = 1000
T = TypeVar("T")


def _chunks(values: Sequence[T]) -> Iterator[list[T]]:
    for start in range(0, len(values), CHUNK):
        yield list(values[start : start + CHUNK])


def keys_of(db: Connection | Session, ids: Collection[int]) -> dict[int, bytes]:
    """The keys of these ids (ids no row has are left out)."""
    found: dict[int, bytes] = {}
    for chunk in _chunks(sorted(ids)):
        query = select(LogprobVocab.id, LogprobVocab.key).where(LogprobVocab.id.in_(chunk))
        found.update((int(i), bytes(k)) for i, k in db.execute(query))
    return found


def ids_of(db: Connection | Session, keys: Collection[bytes]) -> dict[bytes, int]:
    """The ids of these keys (keys not in the table are left out)."""
    found: dict[bytes, int] = {}
    for chunk in _chunks(sorted(keys)):
        query = select(LogprobVocab.key, LogprobVocab.id).where(LogprobVocab.key.in_(chunk))
        found.update((bytes(k), int(i)) for k, i in db.execute(query))
    return found


def highest_id(db: Connection | Session) -> int:
    """The largest id given out so far (0 for an empty table); ids only grow."""
    return int(db.execute(select(func.max(LogprobVocab.id))).scalar() or 0)


def add_keys(connection: Connection, keys: Collection[bytes]) -> None:
    """Insert keys; one another recorder inserted meanwhile is left as it is."""
    rows = [{"key": key} for key in sorted(keys)]
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        if connection.dialect.name == "postgresql":
            connection.execute(postgresql.insert(LogprobVocab).on_conflict_do_nothing(), chunk)
        elif connection.dialect.name == "sqlite":
            connection.execute(sqlite.insert(LogprobVocab).on_conflict_do_nothing(), chunk)
        else:
            connection.execute(insert(LogprobVocab), chunk)
