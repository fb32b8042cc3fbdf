"""Server-sent event framing: vLLM's `data:`-only chunks and the named events of newer APIs."""

from __future__ import annotations

from typing import Any

import orjson

DONE = b"data: [DONE]\n\n"


def named_event(name: str, data: Any) -> bytes:
    """`event: NAME` then the compact JSON payload, as the Responses and Messages APIs send."""
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
