"""Read a response's `id` and `model` where the meter would not otherwise parse: cheaply, leniently.

What is read here only goes into the record, so nothing here refuses a response: an event that
is not JSON, or a body laid out otherwise, just leaves the identity unknown.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.metering.metered import IDENTITY_CHARS, identity_text

# A pooling answer's head, where vLLM writes `id` and `model` (before its vectors or results).
HEAD_BYTES = 2048
# A top-level string member: after `{` or `,` a quote can only open a key (quotes inside strings
# are escaped), and the value must close within the bound or it is not read.
_MEMBER = re.compile(
    rb'[{,]\s*"(id|model)"\s*:\s*("(?:[^"\\]|\\.){0,%d}")' % IDENTITY_CHARS, re.DOTALL
)
_NESTED = re.compile(rb"[\[{]")


def event_field(data: bytes, key: str) -> Any:
    """`key` of an event's JSON object, or None when it is no JSON object."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj.get(key) if isinstance(obj, dict) else None


def head_identity(body: bytes) -> tuple[str | None, str | None]:
    """The `id` and `model` among the scalar members that open a JSON object's bytes."""
    head = body[:HEAD_BYTES]
    start = head.find(b"{")
    if start < 0:
        return None, None
    # Up to the first nested value (or a bracket inside a string: then less is read, never
    # a member of a nested object).
    nested = _NESTED.search(head, start + 1)
    found: dict[bytes, str | None] = {}
    for match in _MEMBER.finditer(head, start, nested.start() if nested else len(head)):
        try:
            value = orjson.loads(match.group(2))
        except orjson.JSONDecodeError:
            continue
        found.setdefault(match.group(1), identity_text(value))
    return found.get(b"id"), found.get(b"model")
