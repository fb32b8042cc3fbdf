"""Identifiers: time-ordered call ids and request ids."""

from __future__ import annotations

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_call_id() -> str:
    """A 26-character, time-ordered, unique id (ULID layout: 48-bit ms time + 80 random bits)."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_request_id() -> str:
    """A request id in vLLM's style (32 hex characters)."""
    return os.urandom(16).hex()
