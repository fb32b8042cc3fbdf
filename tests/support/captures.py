"""Read the vLLM captures kept as test fixtures (HTTP headers + body, or SSE events)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_captures"


def capture_body(name: str) -> Any:
    """The JSON body of a capture, with any HTTP head stripped."""
    text = (CAPTURES / name).read_text()
    if text.startswith("HTTP/"):
        text = text.split("\n\n", 1)[1]
    return orjson.loads(text)


def capture_events(name: str) -> list[bytes]:
    """The SSE events of a stream capture, each ending in a blank line."""
    text = (CAPTURES / name).read_text()
    if text.startswith("HTTP/"):
        text = text.split("\n\n", 1)[1]
    return [part.encode() + b"\n\n" for part in text.strip().split("\n\n") if part.strip()]
