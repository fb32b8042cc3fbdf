"""Make row values storable everywhere: Postgres refuses NUL in text and `\\u0000` in JSONB.

A client controls many stored strings (model name, headers, bodies); one NUL would otherwise
fail its whole batch on every retry, and the batch would hold every other team's calls too.
"""

from __future__ import annotations

from typing import Any

import orjson

NUL = "\x00"
REPLACEMENT = "\ufffd"


def _document(value: Any) -> Any:
    encoded = orjson.dumps(value)
    if b"\\u0000" not in encoded:
        return value
    return orjson.loads(encoded.replace(b"\\u0000", b"\\ufffd"))


def storable_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with every NUL (in text or inside JSON documents) replaced by U+FFFD."""
    out = rows
    for index, row in enumerate(rows):
        fixed: dict[str, Any] | None = None
        for name, value in row.items():
            if isinstance(value, str):
                clean = value.replace(NUL, REPLACEMENT) if NUL in value else value
            elif isinstance(value, dict | list):
                clean = _document(value)
            else:
                continue
            if clean is not value:
                fixed = fixed if fixed is not None else dict(row)
                fixed[name] = clean
        if fixed is not None:
            out = list(rows) if out is rows else out
            out[index] = fixed
    return out
