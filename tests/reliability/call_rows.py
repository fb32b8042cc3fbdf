"""Read back what the log sink wrote: which of the clients' call ids have rows, with what status."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select

from plumbline.db import create_db_engine
from plumbline.models import Call

CHUNK = 2000


@dataclass(frozen=True, slots=True)
class CallRow:
    """The fields of a recorded call the reliability tests judge."""

    status_code: int
    cancelled: bool
    error_type: str | None
    backend: str | None
    stream: bool
    error_message: str | None

    @property
    def gateway_failure(self) -> bool:
        """A 500 the gateway raised itself (a bug), as opposed to a backend's 500 passed on."""
        return self.status_code == 500 and (self.error_message or "").startswith("Gateway error")


def call_rows(database_url: str, call_ids: Iterable[str]) -> dict[str, CallRow]:
    """The rows of the given call ids that exist (missing ids are absent from the result)."""
    ids = list(call_ids)
    found: dict[str, CallRow] = {}
    engine = create_db_engine(database_url)
    try:
        with engine.connect() as connection:
            for start in range(0, len(ids), CHUNK):
                query = select(
                    Call.id,
                    Call.status_code,
                    Call.cancelled,
                    Call.error_type,
                    Call.backend,
                    Call.stream,
                    Call.error_message,
                ).where(Call.id.in_(ids[start : start + CHUNK]))
                for row in connection.execute(query):
                    found[row.id] = CallRow(
                        row.status_code,
                        row.cancelled,
                        row.error_type,
                        row.backend,
                        row.stream,
                        row.error_message,
                    )
    finally:
        engine.dispose()
    return found


def count_calls(database_url: str) -> int:
    """Rows in `calls`."""
    engine = create_db_engine(database_url)
    try:
        with engine.connect() as connection:
            return int(connection.scalar(select(func.count()).select_from(Call)) or 0)
    finally:
        engine.dispose()
