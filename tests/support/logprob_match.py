"""Compare stored logprobs with what the backend sent: exact but for the alternatives' values."""

from __future__ import annotations

from typing import Any

from plumbline.logprob_columns import BOUND

SLACK = 1e-9  # float rounding of the step arithmetic, far below the bound


def _same_alternatives(stored: list[Any], sent: list[Any]) -> bool:
    if len(stored) != len(sent):
        return False
    for a, b in zip(stored, sent, strict=True):
        if {k: v for k, v in a.items() if k != "logprob"} != {
            k: v for k, v in b.items() if k != "logprob"
        }:
            return False
        if abs(a["logprob"] - b["logprob"]) > BOUND + SLACK:
            return False
    return True


def chat_entries_match(stored: list[Any], sent: list[Any]) -> bool:
    """Tokens, bytes and sampled logprobs equal; each alternative's logprob within BOUND."""
    if len(stored) != len(sent):
        return False
    for a, b in zip(stored, sent, strict=True):
        rest_a = {k: v for k, v in a.items() if k != "top_logprobs"}
        rest_b = {k: v for k, v in b.items() if k != "top_logprobs"}
        if rest_a != rest_b or type(a["logprob"]) is not type(b["logprob"]):
            return False
        if not _same_alternatives(a.get("top_logprobs") or [], b.get("top_logprobs") or []):
            return False
    return True
