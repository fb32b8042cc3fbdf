"""The routing workload: sessions over a few long shared documents, each call a new question."""

from __future__ import annotations

import random
from typing import Any

from bench.harness.load import Request


def document(number: int, sections: int) -> str:
    """A long system prompt of its own (about 33 tokens a section in the simulator)."""
    return " ".join(
        f"Document {number}, section {i}: the supplier shall deliver goods of kind "
        f"{(i * 7 + number) % 13} within {i % 9 + 2} days."
        for i in range(sections)
    )


def requests(
    documents: int, sections: int, calls: int, max_tokens: int, seed: int
) -> list[Request]:
    """`calls` streamed chat calls, each on a document picked at random and a fresh question."""
    rng = random.Random(seed)
    texts = [document(n, sections) for n in range(documents)]
    made = []
    for call in range(calls):
        body: dict[str, Any] = {
            "model": "tiny",
            "messages": [
                {"role": "system", "content": texts[rng.randrange(documents)]},
                {"role": "user", "content": f"Question {call}: what does section {call % 60} say?"},
            ],
            "max_tokens": max_tokens,
            "stream": True,
        }
        made.append(Request.of(body))
    return made
