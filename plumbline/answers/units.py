"""Units that numeric answers may carry, grouped by dimension with factors to a base unit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

_DAYS_PER_YEAR = 365.2425  # Gregorian mean year, so 12 months is exactly 1 year


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit: its dimension, its size in the dimension's base unit and its display name."""

    name: str
    dimension: str
    factor: float


# (display name, factor to base, spellings); per dimension ordered largest first for display.
_TABLE: dict[str, list[tuple[str, float, tuple[str, ...]]]] = {
    "time": [
        ("year", _DAYS_PER_YEAR, ("year", "years", "yr", "yrs", "y")),
        ("quarter", _DAYS_PER_YEAR / 4, ("quarter", "quarters")),
        ("month", _DAYS_PER_YEAR / 12, ("month", "months", "mo", "mos")),
        ("week", 7.0, ("week", "weeks", "wk", "wks")),
        ("day", 1.0, ("day", "days", "d")),
        ("hour", 1 / 24, ("hour", "hours", "hr", "hrs", "h")),
        ("minute", 1 / 1440, ("minute", "minutes", "min", "mins")),
        ("second", 1 / 86400, ("second", "seconds", "sec", "secs", "s")),
    ],
    "length": [
        ("km", 1000.0, ("km", "kilometre", "kilometres", "kilometer", "kilometers")),
        ("mile", 1609.344, ("mile", "miles", "mi")),
        ("m", 1.0, ("metre", "metres", "meter", "meters")),
        ("ft", 0.3048, ("ft", "foot", "feet")),
        ("inch", 0.0254, ("inch", "inches")),
        ("cm", 0.01, ("cm", "centimetre", "centimetres", "centimeter", "centimeters")),
        ("mm", 0.001, ("mm", "millimetre", "millimetres", "millimeter", "millimeters")),
    ],
    "mass": [
        ("tonne", 1000.0, ("tonne", "tonnes", "t")),
        ("kg", 1.0, ("kg", "kilogram", "kilograms", "kilo", "kilos")),
        ("lb", 0.45359237, ("lb", "lbs", "pound", "pounds")),
        ("g", 0.001, ("g", "gram", "grams")),
    ],
    "data": [
        ("TB", 1e12, ("tb", "terabyte", "terabytes")),
        ("GiB", 2.0**30, ("gib", "gibibyte", "gibibytes")),
        ("GB", 1e9, ("gb", "gigabyte", "gigabytes")),
        ("MiB", 2.0**20, ("mib", "mebibyte", "mebibytes")),
        ("MB", 1e6, ("mb", "megabyte", "megabytes")),
        ("KiB", 1024.0, ("kib", "kibibyte", "kibibytes")),
        ("KB", 1e3, ("kb", "kilobyte", "kilobytes")),
        ("byte", 1.0, ("byte", "bytes")),
    ],
    "percent": [
        ("percent", 1.0, ("%", "percent", "per cent", "pct")),
        ("bp", 0.01, ("bp", "bps", "basis point", "basis points")),
    ],
    # Currencies are never converted: exchange rates are not an answer-parsing concern.
    "usd": [("USD", 1.0, ("usd", "$", "dollar", "dollars", "us dollars"))],
    "eur": [("EUR", 1.0, ("eur", "\u20ac", "euro", "euros"))],
    "gbp": [("GBP", 1.0, ("gbp", "\u00a3", "pound sterling", "sterling"))],
}


_NOT_FOR_DISPLAY = frozenset({"quarter", "bp"})


def _spelling_index() -> dict[str, Unit]:
    index: dict[str, Unit] = {}
    for dimension, rows in _TABLE.items():
        for name, factor, spellings in rows:
            for spelling in (*spellings, name.lower()):
                index.setdefault(spelling, Unit(name, dimension, factor))
    return index


_INDEX = MappingProxyType(_spelling_index())
UNIT_SPELLINGS: tuple[str, ...] = tuple(sorted(_INDEX, key=len, reverse=True))


def find_unit(spelling: str) -> Unit | None:
    """The unit a spelling names (case-insensitive), or None."""
    return _INDEX.get(" ".join(spelling.lower().split()))


def display_in_best_unit(base_value: float, dimension: str) -> tuple[float, str]:
    """The value in the largest unit of its dimension where it reads plainly (>= 1, 2 decimals)."""
    rows = _TABLE[dimension]
    for name, factor, _ in rows:
        value = base_value / factor
        cents = value * 100
        plain = math.isclose(cents, round(cents), rel_tol=1e-9, abs_tol=1e-6)
        if name not in _NOT_FOR_DISPLAY and abs(value) >= 1 and plain:
            return round(cents) / 100, name
    name, factor, _ = next(row for row in rows if row[1] == 1.0)
    return base_value / factor, name
