"""Read a response's `id` and `model` where the meter would not otherwise parse: cheaply, leniently.

What is read here only goes into the record, so nothing here refuses a response: an event that
is not JSON, or a body laid out otherwise, just leaves the identity unknown.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.metering.metered import identity_text

# A pooling answer's head, where vLLM writes `id` and `model` (before its vectors or results).
HEAD_BYTES = 2048
_NESTED = re.compile(rb"[\[{]")


def _object(data: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def event_field(data: bytes, key: str) -> Any:
    """`key` of an event's JSON object, or None when it is no JSON object."""
    obj = _object(data)
    return obj.get(key) if obj is not None else None


def head_identity(body: bytes) -> tuple[str | None, str | None]:
    """The `id` and `model` among the scalar members that open a JSON object's bytes."""
    start = body.find(b"{", 0, HEAD_BYTES)
    if start < 0:
        return None, None
    nested = _NESTED.search(body, start + 1, HEAD_BYTES)
    if nested is None:
        head = _object(body) if len(body) <= HEAD_BYTES else None
    else:
        # The members before the first nested value, closed after the last whole one. A cut
        # inside a string (a comma or bracket in a value) leaves it unterminated: no JSON, so
        # nothing is read, never a wrong member.
        members = body[start : nested.start()]
        last = members.rfind(b",")
        head = _object(members[:last] + b"}") if last > 0 else None
    if head is None:
        return None, None
    return identity_text(head.get("id")), identity_text(head.get("model"))
