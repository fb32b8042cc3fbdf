"""The leading text of a call's prompt, read from fields already parsed, within a bound."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# Values looked at before the walk stops, whatever their size or nesting: a prompt of a
# million empty parts costs this many steps, not a million.
MAX_NODES = 4096


def leading_text(values: Iterable[object], max_chars: int, max_nodes: int = MAX_NODES) -> str:
    """The first `max_chars` characters of the strings (and numbers) in `values`, in order.

    Objects are read in their key order and lists in theirs, so the same request always gives
    the same text; what is not a string or a number contributes nothing but its place. The
    walk keeps one iterator per open list or object, so each step is one value.
    """
    parts: list[str] = []
    left = max_chars
    stack: list[Iterator[object]] = [iter(values)]
    for _ in range(max_nodes):
        if not stack or left <= 0:
            break
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
            continue
        if isinstance(value, str):
            piece = value[:left]
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float):
            piece = f"{value},"[:left]
        elif isinstance(value, dict):
            # Keys matter ("role", "content"), so two messages differ by role as vLLM's do.
            stack.append(_flat_items(value))
            continue
        elif isinstance(value, list | tuple):
            stack.append(iter(value))
            continue
        else:
            continue
        parts.append(piece)
        left -= len(piece)
    return "".join(parts)


_END = object()


def _flat_items(mapping: dict[object, object]) -> Iterator[object]:
    for key, item in mapping.items():
        yield key
        yield item
