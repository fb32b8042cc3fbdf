"""Read the captured vLLM responses in tests/fixtures/vllm_captures (headers, bodies, SSE)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_captures"
FRESH = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_fresh"


@dataclass
class Capture:
    """One captured response: status and headers when recorded, and the body text."""

    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""

    def json(self) -> Any:
        """The body parsed as JSON."""
        return orjson.loads(self.body)

    def events(self) -> list[str]:
        """SSE `data:` payloads in order ("[DONE]" included)."""
        return sse_payloads(self.body)


def load(name: str) -> Capture:
    """Parse a capture file; `.txt` files may start with an HTTP status line and headers."""
    text = (CAPTURES / name).read_text(encoding="utf-8")
    if not text.startswith("HTTP/"):
        return Capture(status=None, body=text)
    head, _, body = text.partition("\n\n")
    lines = head.splitlines()
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name_, _, value = line.partition(":")
        headers[name_.strip().lower()] = value.strip()
    return Capture(status=status, headers=headers, body=body)


def sse_payloads(text: str) -> list[str]:
    """The `data:` payloads of an SSE body."""
    payloads = []
    for block in text.split("\n\n"):
        block = block.strip()
        if block:
            assert block.startswith("data: "), block[:80]
            payloads.append(block[len("data: ") :])
    return payloads
