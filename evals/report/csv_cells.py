"""CSV cells that a spreadsheet opens as text, never as a formula (CSV injection)."""

from __future__ import annotations

from typing import Any

import pandas as pd

# A spreadsheet evaluates a cell starting with any of these; TAB and CR hide the start too.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# The quote a spreadsheet reads as "text follows"; cells that start with it are quoted too,
# so reading an export back can strip exactly one.
ESCAPE = "'"


def escape_cell(value: Any) -> Any:
    """A text value a spreadsheet shows as written; other values unchanged."""
    if isinstance(value, str) and value.startswith((*FORMULA_STARTS, ESCAPE)):
        return ESCAPE + value
    return value


def unescape_cell(value: Any) -> Any:
    """The value `escape_cell` was given."""
    if isinstance(value, str) and value.startswith(ESCAPE):
        return value[1:]
    return value


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        str(name)
        for name, dtype in frame.dtypes.items()
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
    ]


def escaped_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of the frame with every text cell escaped; numbers stay numbers."""
    escaped = frame.copy()
    for name in _text_columns(frame):
        escaped[name] = frame[name].map(escape_cell, na_action="ignore")
    return escaped


def unescaped_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame read from an escaped CSV, with its text cells as they were before escaping."""
    plain = frame.copy()
    for name in _text_columns(frame):
        plain[name] = frame[name].map(unescape_cell, na_action="ignore")
    return plain


def spreadsheet_csv(frame: pd.DataFrame) -> str:
    """The frame as CSV text that is safe to open in a spreadsheet."""
    return str(escaped_frame(frame).to_csv(index=False))
