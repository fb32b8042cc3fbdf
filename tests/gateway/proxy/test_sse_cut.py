"""Reads are cut into whole events, however the blank lines between them fall."""

from __future__ import annotations

import pytest

from gateway.proxy.sse_cut import EventTooLarge, cut_events, one_event


def _echo(event: bytes, t: float) -> list[bytes]:
    return [event]


@pytest.mark.parametrize(
    ("data", "whole"),
    [
        (b"data: x\n\n", True),
        (b"\n\n", True),
        (b"\n", False),
        (b"", False),
        (b"data: x\n", False),
        (b"data: x\n\ndata: y\n\n", False),
        (b"data: x\n\nda", False),
    ],
)
def test_one_event_is_exactly_one_whole_event(data: bytes, whole: bool) -> None:
    assert one_event(data) is whole


def test_a_blank_line_split_across_reads_ends_its_event() -> None:
    out, rest = cut_events(_echo, b"", b"data: x\n", 0.0, 1024)
    assert (out, rest) == ([], b"data: x\n")
    out, rest = cut_events(_echo, rest, b"\ndata: y\n\nda", 0.0, 1024)
    assert (out, rest) == ([b"data: x\n\n", b"data: y\n\n"], b"da")


def test_an_unended_event_over_the_bound_is_refused() -> None:
    with pytest.raises(EventTooLarge):
        cut_events(_echo, b"", b"x" * 1025, 0.0, 1024)
    with pytest.raises(EventTooLarge):
        cut_events(_echo, b"", b"x" * 1023 + b"\n\n", 0.0, 1024)
