"""Identifiers: time-ordered call ids and request ids."""

from __future__ import annotations

import random
import time

# Ids need to be unique, not secret (every read checks the caller's team), so they come from
# the process's Mersenne Twister, seeded from the OS: os.urandom is a system call, and on the
# hot path each one is a chance for another thread to take the GIL.


def new_call_id() -> str:
    """A 32-character, time-ordered, unique id: 48-bit millisecond time, 80 random bits, hex."""
    return f"{time.time_ns() // 1_000_000:012x}{random.getrandbits(80):020x}"


def new_request_id() -> str:
    """A request id in vLLM's style (32 hex characters)."""
    return f"{random.getrandbits(128):032x}"
