"""W3C Trace Context Level 1 parsing and formatting, case by case from the spec."""

from __future__ import annotations

import pytest

from plumbline.otlp.trace_context import (
    format_traceparent,
    new_span_id,
    new_trace_id,
    parse_traceparent,
    parse_tracestate,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"


def test_a_valid_version_00_traceparent_names_its_parent() -> None:
    parent = parse_traceparent(f"00-{TRACE}-{SPAN}-01")
    assert parent is not None
    assert (parent.trace_id, parent.span_id, parent.sampled) == (TRACE, SPAN, True)
    unsampled = parse_traceparent(f"00-{TRACE}-{SPAN}-00")
    assert unsampled is not None and unsampled.sampled is False


def test_only_the_sampled_bit_of_the_flags_counts() -> None:
    parent = parse_traceparent(f"00-{TRACE}-{SPAN}-fe")
    assert parent is not None and parent.sampled is False
    parent = parse_traceparent(f"00-{TRACE}-{SPAN}-03")
    assert parent is not None and parent.sampled is True


@pytest.mark.parametrize(
    "value",
    [
        f"00-{TRACE.upper()}-{SPAN}-01",  # uppercase hex
        f"00-{TRACE}-{SPAN.upper()}-01",
        f"00-{TRACE}-{SPAN}-0A",
        f"0A-{TRACE}-{SPAN}-01",
        f"00-{'0' * 32}-{SPAN}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero span id
        f"ff-{TRACE}-{SPAN}-01",  # version ff is never valid
        f"00-{TRACE}-{SPAN}-01-extra",  # version 00 has exactly four fields
        f"00-{TRACE}-{SPAN}-011",
        f"00-{TRACE[:-1]}-{SPAN}-01",
        f"00-{TRACE}-{SPAN}01",
        f"00_{TRACE}_{SPAN}_01",
        f"00-{TRACE}-{SPAN}-0\x01",
        f"01-{TRACE}-{SPAN}-01x",  # a future version's extra fields follow a dash
        f"00-{TRACE}-{SPAN}-01" + "-" * 9000,
        "",
        "garbage",
    ],
)
def test_an_invalid_traceparent_names_no_parent(value: str) -> None:
    assert parse_traceparent(value) is None


def test_a_future_version_is_read_by_version_00_rules() -> None:
    assert parse_traceparent(f"cc-{TRACE}-{SPAN}-01") is not None
    parent = parse_traceparent(f"cc-{TRACE}-{SPAN}-01-what-the-future-holds")
    assert parent is not None and (parent.trace_id, parent.sampled) == (TRACE, True)


def test_blanks_around_the_value_are_ignored() -> None:
    assert parse_traceparent(f" \t00-{TRACE}-{SPAN}-01 ") is not None


def test_tracestate_keeps_valid_members_in_order() -> None:
    value = "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,tenant@vendor=x y"
    assert parse_tracestate([value]) == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x y"


def test_several_tracestate_headers_are_one_list() -> None:
    assert parse_tracestate(["a=1", "b=2,c=3"]) == "a=1,b=2,c=3"


@pytest.mark.parametrize(
    "member",
    ["Upper=1", "a=", "=1", "a=1=2", "a=x\x7f", "a=\x01", "a b=1", "1@" + "x" * 15 + "=1", "é=1"],
)
def test_invalid_tracestate_members_are_dropped(member: str) -> None:
    assert parse_tracestate([f"good=1,{member},also=2"]) == "good=1,also=2"


def test_a_repeated_key_keeps_its_first_value() -> None:
    assert parse_tracestate(["a=1,b=2,a=3"]) == "a=1,b=2"


def test_tracestate_is_at_most_32_members() -> None:
    members = [f"k{i}=v" for i in range(40)]
    kept = parse_tracestate([",".join(members)])
    assert kept == ",".join(members[:32])


def test_tracestate_is_at_most_512_characters_long_members_first() -> None:
    long_member = "long=" + "x" * 200
    members = [f"k{i:02}=" + "v" * 40 for i in range(12)]  # 12 x 44 characters
    kept = parse_tracestate([",".join([members[0], long_member, *members[1:]])])
    assert kept is not None and len(kept) <= 512
    assert "long=" not in kept
    assert kept == ",".join(members[:11])


def test_empty_or_all_invalid_tracestate_is_none() -> None:
    assert parse_tracestate([]) is None
    assert parse_tracestate([" , ,"]) is None
    assert parse_tracestate(["NOPE"]) is None


def test_new_ids_are_valid_lowercase_hex() -> None:
    trace_id, span_id = new_trace_id(), new_span_id()
    assert len(trace_id) == 32 and len(span_id) == 16
    value = format_traceparent(trace_id, span_id, True)
    parent = parse_traceparent(value)
    assert parent is not None and (parent.trace_id, parent.span_id) == (trace_id, span_id)
    assert format_traceparent(TRACE, SPAN, False) == f"00-{TRACE}-{SPAN}-00"
    assert new_trace_id() != trace_id


def test_a_flood_of_invalid_members_is_cut_short() -> None:
    flood = ",".join(["BAD"] * 3000 + ["late=1"])
    assert parse_tracestate([flood]) is None
    assert parse_tracestate(["early=1," + ", ," * 2000 + "BAD"]) == "early=1"
