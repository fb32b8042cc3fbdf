"""An OrderedDict kept to a bound by dropping its oldest entries (the key cache's tables)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def bounded_put(entries: OrderedDict[K, V], key: K, value: V, bound: int) -> None:
    """Insert as the newest entry, dropping the oldest beyond `bound`."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > bound:
        entries.popitem(last=False)
