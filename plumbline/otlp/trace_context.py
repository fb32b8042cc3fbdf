"""W3C Trace Context (Level 1): reading `traceparent`/`tracestate` and writing the gateway's."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# https://www.w3.org/TR/trace-context/ : lowercase hex only; version ff is never valid.
_PARENT_FIELDS = r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})"
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16
# tracestate list members (the spec's ABNF): a simple or a multi-tenant key, then a value of
# printable ASCII without ',' or '=' that does not end in a space.
_KEY = r"(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"
_VALUE = r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_MEMBER = rf"({_KEY})=({_VALUE})"
MAX_MEMBERS = 32
MAX_MEMBERS_LOOKED_AT = 4 * MAX_MEMBERS
MAX_TRACESTATE_CHARS = 512
# When the list must shrink to fit, members longer than this go first (the spec's advice).
LONG_MEMBER_CHARS = 128
# What is read of a header at all: a traceparent of a future version may be longer than 55
# characters, but nothing past this is ever looked at.
MAX_HEADER_CHARS = 8192


@dataclass(frozen=True, slots=True)
class ParentContext:
    """A valid `traceparent` the client sent: its trace, its span and its sampled flag."""

    trace_id: str
    span_id: str
    sampled: bool


def parse_traceparent(value: str) -> ParentContext | None:
    """The parent a `traceparent` names, or None when the spec says to start a new trace."""
    value = value.strip(" \t")
    if len(value) < 55 or len(value) > MAX_HEADER_CHARS:
        return None
    match = re.match(_PARENT_FIELDS, value)
    if match is None:
        return None
    version, trace_id, span_id, flags = match.groups()
    if version == "ff":
        return None
    # Version 00 is exactly 55 characters; a later version may append fields after a '-'.
    if len(value) > 55 and (version == "00" or value[55] != "-"):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return ParentContext(trace_id, span_id, bool(int(flags, 16) & 1))


def parse_tracestate(values: list[str]) -> str | None:
    """The `tracestate` headers as one list, invalid members and repeated keys dropped,
    bounded to 32 members and 512 characters; None when nothing valid is left."""
    members: list[str] = []
    keys: set[str] = set()
    looked_at = 0
    for part in ",".join(values)[:MAX_HEADER_CHARS].split(","):
        member = part.strip(" \t")
        if not member:
            continue
        # Past 32 valid members (or a few times that many tries) nothing more can be kept.
        looked_at += 1
        if len(members) == MAX_MEMBERS or looked_at > MAX_MEMBERS_LOOKED_AT:
            break
        match = re.fullmatch(_MEMBER, member)
        if match is None or match.group(1) in keys:
            continue
        keys.add(match.group(1))
        members.append(member)
    members = _bounded(members)
    return ",".join(members) or None


def _bounded(members: list[str]) -> list[str]:
    """At most 512 characters: long members removed first, then from the right."""
    if len(",".join(members)) <= MAX_TRACESTATE_CHARS:
        return members
    members = [m for m in members if len(m) <= LONG_MEMBER_CHARS]
    while len(",".join(members)) > MAX_TRACESTATE_CHARS:
        members.pop()
    return members


def new_trace_id() -> str:
    """A random, valid (never all-zero) 32-hex trace id; see gateway.ids for why os.urandom."""
    while True:
        trace_id = os.urandom(16).hex()
        if trace_id != _ZERO_TRACE:
            return trace_id


def new_span_id() -> str:
    """A random, valid (never all-zero) 16-hex span id."""
    while True:
        span_id = os.urandom(8).hex()
        if span_id != _ZERO_SPAN:
            return span_id


def format_traceparent(trace_id: str, span_id: str, sampled: bool) -> str:
    """A version-00 `traceparent`: the only version this gateway writes."""
    return f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"
