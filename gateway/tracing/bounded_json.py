"""A JSON document cut to a size a collector takes, keeping its structure (the conventions ask it).

Long strings are cut, all to one length found by halving; where that would cut them below
`MIN_CUT` characters, the oldest items of the list are left out instead, keeping the latest.
Values nested deeper than `MAX_DEPTH` are cut too (a client's JSON may nest a thousand levels;
orjson writes 254).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

# Names and kinds are cut only past a fixed bound: shorter, they would no longer say what a
# part is.
STRUCTURAL = frozenset({"type", "role", "finish_reason", "id", "name", "modality", "mime_type"})
STRUCTURAL_CHARS = 256
CUT = "…"
# Fewer, older items are left out before strings are cut below this.
MIN_CUT = 64
# Levels kept below the document's own list; what lies deeper is `CUT`.
MAX_DEPTH = 64


def _cut(value: Any, cap: int, key: str | None = None, depth: int = 0) -> Any:
    if isinstance(value, str):
        bound = STRUCTURAL_CHARS if key in STRUCTURAL else cap
        return value if len(value) <= bound else value[:bound] + CUT
    if isinstance(value, list | dict) and depth > MAX_DEPTH:
        return CUT
    if isinstance(value, list):
        return [_cut(v, cap, None, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v, cap, k, depth + 1) for k, v in value.items()}
    return value


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _fits(items: list[Any], cap: int, limit: int) -> str | None:
    text = _dumps(_cut(items, cap))
    return text if len(text) <= limit else None


def _latest_fit(items: list[Any], cap: int, limit: int, count: int) -> bool:
    return _fits(items[len(items) - count :], cap, limit) is not None


def _largest(fits: Callable[[int], bool], high: int) -> int:
    """The largest n in 0..high with fits(n), for a fits that holds up to some n and then not."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _latest_count(items: list[Any], cap: int, limit: int) -> int:
    """How many of the latest items fit with their strings cut to `cap`.

    Counted item by item from the latest ("[a,b]" is 1 + (len(a) + 1) + (len(b) + 1) long), so
    its cost follows what fits, not the list: 34,000 tiny messages cost what 600 cost.
    """
    total = 1
    for count, item in enumerate(reversed(items)):
        total += len(_dumps(_cut(item, cap, None, 1))) + 1
        if total > limit:
            return count
    return len(items)


def _whole(items: list[Any], limit: int) -> str | None:
    try:
        text = _dumps(items)
    except orjson.JSONEncodeError:
        return None
    return text if len(text) <= limit else None


def bounded_json(items: list[Any], limit: int) -> str:
    """`items` as JSON of at most `limit` characters."""
    text = _whole(items, limit)
    if text is not None:
        return text
    for floor in (MIN_CUT, 0):
        # As many of the latest items as fit with their strings cut to `floor`...
        count = _latest_count(items, floor, limit)
        if count:
            kept = items[len(items) - count :]
            # ...then their strings as long as they fit (often whole: one probe).
            whole = _fits(kept, limit, limit)
            if whole is not None:
                return whole
            cap = _largest(partial(_latest_fit, kept, limit=limit, count=count), limit)
            return _fits(kept, cap, limit) or "[]"
    return "[]"
