"""The ids of a run's spans: the run's are made at creation, each question's derived from them."""

from __future__ import annotations

import hashlib

ZERO_SPAN = "0" * 16


def question_span_id(trace_id: str, question_key: str) -> str:
    """The span id of a question in a run's trace: the same wherever it is computed.

    Derived rather than stored, so sample rows carry nothing and the worker that sends a
    sample's call and the one that exports the run's spans agree on it.
    """
    digest = hashlib.sha256(f"{trace_id}:{question_key}".encode()).hexdigest()
    for start in range(0, len(digest) - 16 + 1, 16):
        span_id = digest[start : start + 16]
        if span_id != ZERO_SPAN:
            return span_id
    return "0" * 15 + "1"  # every 64-bit part of the digest zero: unreachable in practice
