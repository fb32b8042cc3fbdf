"""The leading text of a call's prompt, read from fields already parsed, within a bound."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

# Values looked at before the walk stops, whatever their size: a prompt of a million empty
# parts costs this many steps, not a million.
MAX_NODES = 4096


def leading_text(values: Iterable[object], max_chars: int, max_nodes: int = MAX_NODES) -> str:
    """The first `max_chars` characters of the strings (and numbers) in `values`, in order.

    Objects are read in their key order and lists in theirs, so the same request always gives
    the same text; what is not a string or a number contributes nothing but its place.
    """
    parts: list[str] = []
    left = max_chars
    nodes = 0
    stack: list[object] = list(values)[::-1]
    while stack and left > 0 and nodes < max_nodes:
        value = stack.pop()
        nodes += 1
        if isinstance(value, str):
            piece = value[:left]
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float):
            piece = f"{value},"[:left]
        elif isinstance(value, dict):
            # Keys matter ("role", "content"), so two messages differ by role as vLLM's do.
            for key, item in reversed(list(islice(value.items(), max_nodes - nodes))):
                stack.append(item)
                stack.append(key)
            continue
        elif isinstance(value, list):
            stack.extend(reversed(list(islice(value, max_nodes - nodes))))
            continue
        else:
            continue
        parts.append(piece)
        left -= len(piece)
    return "".join(parts)
