"""One-pass uncertainty signals of a call: mean logprob, smallest top-1/top-2 margin, near ties."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gateway.metering.logprob_codec import CHAT

NEAR_TIE_MARGIN = 0.1


@dataclass(frozen=True, slots=True)
class LogprobSummary:
    """Mean sampled logprob, lowest probability margin between the top two, count of near ties."""

    mean_logprob: float | None
    min_margin: float | None
    near_ties: int


def _positions(fmt: str, per_choice: dict[int, Any]) -> Iterator[tuple[float | None, list[float]]]:
    for value in per_choice.values():
        if fmt == CHAT:
            for entry in value:
                top = entry.get("top_logprobs") or []
                yield entry.get("logprob"), [alt["logprob"] for alt in top]
        else:
            tops = value.get("top_logprobs") or []
            for lp, top in zip(value.get("token_logprobs") or [], tops, strict=False):
                yield lp, list((top or {}).values())


def summarize_logprobs(
    fmt: str, per_choice: dict[int, Any], near_tie_margin: float = NEAR_TIE_MARGIN
) -> LogprobSummary:
    """Summarise the sampled logprobs and the margin top-1 minus top-2 (in probability)."""
    total, count, near_ties = 0.0, 0, 0
    min_margin: float | None = None
    for sampled, alternatives in _positions(fmt, per_choice):
        if sampled is not None:
            total += sampled
            count += 1
        if len(alternatives) >= 2:
            first, second = sorted(alternatives, reverse=True)[:2]
            margin = math.exp(first) - math.exp(second)
            if min_margin is None or margin < min_margin:
                min_margin = margin
            if margin < near_tie_margin:
                near_ties += 1
    return LogprobSummary(total / count if count else None, min_margin, near_ties)
