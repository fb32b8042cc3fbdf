"""Split a batch into the rows of each call, and those into single rows, to find a bad one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gateway.recording.rows import RowBatch

DEPENDENT_TABLES = ("logprobs", "bodies", "live_samples")


def _id(row: dict[str, Any]) -> Any:
    return row.get("id", row.get("call_id"))


def rows_by_call(batch: RowBatch) -> list[RowBatch]:
    """One batch per call id, in the order the calls came."""
    calls: dict[Any, RowBatch] = {}
    for row in batch.calls:
        calls.setdefault(_id(row), RowBatch()).calls.append(row)
    for table in DEPENDENT_TABLES:
        for row in getattr(batch, table):
            getattr(calls.setdefault(_id(row), RowBatch()), table).append(row)
    return list(calls.values())


def single_rows(batch: RowBatch) -> Iterator[RowBatch]:
    """Each row of a batch alone, the call's row first."""
    for table in ("calls", *DEPENDENT_TABLES):
        for row in getattr(batch, table):
            single = RowBatch()
            getattr(single, table).append(row)
            yield single


def row_count(batch: RowBatch) -> int:
    """Rows in all four tables."""
    return sum(len(getattr(batch, t)) for t in ("calls", *DEPENDENT_TABLES))


def call_id(batch: RowBatch) -> str:
    """The call a batch's first row belongs to."""
    for table in ("calls", *DEPENDENT_TABLES):
        rows = getattr(batch, table)
        if rows:
            return str(_id(rows[0]))
    return "?"
