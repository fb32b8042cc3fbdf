"""Cut a stream's bytes into whole server-sent events, each searched and copied once."""

from __future__ import annotations

from collections.abc import Callable

# The meter's `feed`: one whole event and its arrival time in, the bytes to send out.
Feed = Callable[[bytes, float], list[bytes]]


class EventTooLarge(Exception):
    """An event, or the bytes of one not yet ended, is over the stream's bound."""


def cut_events(
    feed: Feed, buffer: bytes, data: bytes, t: float, max_event: int
) -> tuple[list[bytes], bytes]:
    """Feed the whole events of `buffer` + `data`; what to send, and the bytes left over."""
    # Only the new bytes (and the one before, for a split blank line) are searched, and
    # events are cut by offset, so a chunk costs time in its own size only.
    scan = len(buffer) - 1 if buffer else 0
    buffer += data
    start = 0
    out: list[bytes] = []
    while (end := buffer.find(b"\n\n", scan)) >= 0:
        if end + 2 - start > max_event:
            raise EventTooLarge
        out.extend(feed(buffer[start : end + 2], t))
        start = scan = end + 2
    if start:
        buffer = buffer[start:]
    if len(buffer) > max_event:
        raise EventTooLarge
    return out, buffer


def one_event(data: bytes) -> bool:
    """Whether `data` is exactly one whole event: what a read at a backend's cadence holds."""
    return data.find(b"\n\n") == len(data) - 2 >= 0
