"""Identifiers: time-ordered call ids and request ids."""

from __future__ import annotations

import os
import time

# The random part comes from the kernel on every call, not from the `random` module: any
# library in the process may call random.seed() (for reproducible sampling, say), after which
# every gateway process seeded alike would hand out the same ids. os.urandom has no state in
# the process to reseed, and forks need nothing done; it costs well under a microsecond.


def new_call_id() -> str:
    """A 32-character, time-ordered, unique id: 48-bit millisecond time, 80 random bits, hex."""
    return f"{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


def new_request_id() -> str:
    """A request id in vLLM's style (32 hex characters)."""
    return os.urandom(16).hex()
