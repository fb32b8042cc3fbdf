"""Fit every row value to its column, so one odd value (a client's or a backend's) cannot fail
the insert of a batch that holds every team's calls.

Strings are cut to their column's length with NUL and lone surrogates replaced; numbers out of
their column's range, non-finite floats and values of the wrong type become NULL (or a neutral
value where the column is NOT NULL); a JSON document that cannot be serialised becomes NULL.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import orjson
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
)

from gateway.recording.rows import RowBatch
from plumbline.models import Call, CallBody, CallLogprobs, LiveSample

Fit = Callable[[Any], Any]
NUL = "\x00"
REPLACEMENT = "\ufffd"


def _integer(bound: int, nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if type(value) is int and -bound <= value < bound:
            return value
        if value is None or nullable or type(value) is not int:
            return None if nullable else 0
        return max(-bound, min(bound - 1, value))

    return fit


def _float(nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if type(value) in (int, float) and abs(value) < math.inf:
            # float() of an int past the double range raises; abs() of it does not.
            try:
                return float(value)
            except OverflowError:
                pass
        return None if nullable else 0.0

    return fit


def clean_text(value: str) -> str:
    """The text with NUL and unencodable code points (lone surrogates) replaced."""
    if NUL in value:
        value = value.replace(NUL, REPLACEMENT)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _string(length: int | None, nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if value is None and nullable:
            return None
        text = clean_text(value if isinstance(value, str) else str(value))
        return text[:length] if length is not None else text

    return fit


def _document(nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if value is None:
            return None
        try:
            # The same limits (depth, 64-bit integers, UTF-8) the spool's encoder has.
            encoded = orjson.dumps(value)
        except TypeError:
            return None if nullable else {}
        if b"\\u0000" in encoded:
            return orjson.loads(encoded.replace(b"\\u0000", b"\\ufffd"))
        return value

    return fit


def _bytes(nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if isinstance(value, bytes):
            return value
        return None if nullable else b""

    return fit


def _boolean(nullable: bool) -> Fit:
    def fit(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        return None if nullable and value is None else bool(value)

    return fit


def _fit_of(column: Column[Any]) -> Fit | None:
    kind, nullable = column.type, bool(column.nullable)
    if isinstance(kind, SmallInteger):
        return _integer(2**15, nullable)
    if isinstance(kind, BigInteger):
        return _integer(2**63, nullable)
    if isinstance(kind, Integer):
        return _integer(2**31, nullable)
    if isinstance(kind, Float):
        return _float(nullable)
    if isinstance(kind, String):
        return _string(kind.length, nullable)
    if isinstance(kind, JSON):
        return _document(nullable)
    if isinstance(kind, LargeBinary):
        return _bytes(nullable)
    if isinstance(kind, Boolean):
        return _boolean(nullable)
    # Datetimes are the gateway's own clock readings.
    return None


def _fits_of(table: Table) -> dict[str, Fit]:
    fits = {}
    for column in table.columns:
        fit = _fit_of(column)
        if fit is not None:
            fits[column.name] = fit
    return fits


class ColumnFitter:
    """Fits the rows of the four call tables to their columns."""

    def __init__(self) -> None:
        tables: dict[str, Any] = {
            "calls": Call.__table__,
            "logprobs": CallLogprobs.__table__,
            "bodies": CallBody.__table__,
            "live_samples": LiveSample.__table__,
        }
        self._fits = {name: _fits_of(table) for name, table in tables.items()}

    def _rows(self, table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fits = self._fits[table]
        out = []
        for row in rows:
            fitted = dict(row)
            for name, value in row.items():
                fit = fits.get(name)
                if fit is not None:
                    fitted[name] = fit(value)
            out.append(fitted)
        return out

    def fit(self, batch: RowBatch) -> RowBatch:
        """A batch whose every value its column takes."""
        return RowBatch(
            calls=self._rows("calls", batch.calls),
            logprobs=self._rows("logprobs", batch.logprobs),
            bodies=self._rows("bodies", batch.bodies),
            live_samples=self._rows("live_samples", batch.live_samples),
        )
