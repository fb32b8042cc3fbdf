"""Identifiers: time-ordered call ids and request ids."""

from __future__ import annotations

import os
import time


def new_call_id() -> str:
    """A 32-character, time-ordered, unique id: 48-bit millisecond time, 80 random bits, hex."""
    return f"{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


def new_request_id() -> str:
    """A request id in vLLM's style (32 hex characters)."""
    return os.urandom(16).hex()
