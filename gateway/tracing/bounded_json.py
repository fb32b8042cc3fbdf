"""A JSON document cut to a size a collector takes, keeping its structure (the conventions ask it).

Long strings are cut first, all to one length found by halving; if the structure alone is still
too big, the oldest items of the list are left out, keeping the latest.
"""

from __future__ import annotations

from typing import Any

import orjson

# Names and kinds are cut only past a fixed bound: shorter, they would no longer say what a
# part is.
STRUCTURAL = frozenset({"type", "role", "finish_reason", "id", "name", "modality", "mime_type"})
STRUCTURAL_CHARS = 256
CUT = "…"


def _cut(value: Any, cap: int, key: str | None = None) -> Any:
    if isinstance(value, str):
        bound = STRUCTURAL_CHARS if key in STRUCTURAL else cap
        return value if len(value) <= bound else value[:bound] + CUT
    if isinstance(value, list):
        return [_cut(v, cap) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v, cap, k) for k, v in value.items()}
    return value


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _fits(items: list[Any], cap: int, limit: int) -> str | None:
    text = _dumps(_cut(items, cap))
    return text if len(text) <= limit else None


def bounded_json(items: list[Any], limit: int) -> str:
    """`items` as JSON of at most `limit` characters."""
    text = _dumps(items)
    if len(text) <= limit:
        return text
    if _fits(items, 0, limit) is None:
        # The structure alone is too big: keep as many of the latest items as fit, cut bare.
        low, high = 0, len(items)
        while low < high:
            middle = (low + high + 1) // 2
            if _fits(items[-middle:], 0, limit) is None:
                high = middle - 1
            else:
                low = middle
        items = items[len(items) - low :]
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if _fits(items, middle, limit) is None:
            high = middle - 1
        else:
            low = middle
    return _fits(items, low, limit) or "[]"
