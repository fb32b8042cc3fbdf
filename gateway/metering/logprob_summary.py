"""One-pass uncertainty signals of a call: mean logprob, smallest top-1/top-2 margin, near ties.

Chat logprobs are summarised straight from the backend's JSON: every position carries its
sampled logprob followed by k alternatives, so the `"logprob":` numbers form a (positions, k+1)
matrix. Anything else (completions, uneven lists) is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

NEAR_TIE_MARGIN = 0.1
_LOGPROB = re.compile(rb'"logprob":(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)')
_POSITION = b'"top_logprobs":'


@dataclass(frozen=True, slots=True)
class LogprobSummary:
    """Mean sampled logprob, lowest probability margin between the top two, count of near ties."""

    mean_logprob: float | None
    min_margin: float | None
    near_ties: int


def _summary(sampled: np.ndarray, top: np.ndarray | None, margin: float) -> LogprobSummary:
    mean = float(sampled.mean()) if sampled.size else None
    if top is None or top.shape[1] < 2 or not top.shape[0]:
        return LogprobSummary(mean, None, 0)
    best = np.sort(top, axis=1)[:, ::-1]
    margins = np.exp(best[:, 0]) - np.exp(best[:, 1])
    return LogprobSummary(mean, float(margins.min()), int((margins < margin).sum()))


def summarize_arrays(
    sampled: np.ndarray, top: np.ndarray | None, margin: float = NEAR_TIE_MARGIN
) -> LogprobSummary:
    """Summary of sampled logprobs and a (positions, k) matrix of alternatives, parsed already."""
    return _summary(sampled, top, margin)


def summarize_chat(
    document: bytes, margin: float = NEAR_TIE_MARGIN, positions: int | None = None
) -> LogprobSummary:
    """Summary of a per-choice chat logprobs document (see logprob_codec.per_choice_json).

    `positions`: the document's count of `"top_logprobs":`, when the caller has it already.
    """
    positions = document.count(_POSITION) if positions is None else positions
    try:
        # orjson reads the numbers several times faster than numpy converts a list of bytes.
        numbers = orjson.loads(b"[" + b",".join(_LOGPROB.findall(document)) + b"]")
    except orjson.JSONDecodeError:
        numbers = None
    values = np.array(numbers or [], dtype=np.float64)
    if numbers is not None and positions and values.size % positions == 0:
        matrix = values.reshape(positions, values.size // positions)
        return _summary(matrix[:, 0], matrix[:, 1:], margin)
    return summarize_parsed(orjson.loads(document), margin)


def summarize_parsed(per_choice: dict[str, Any], margin: float = NEAR_TIE_MARGIN) -> LogprobSummary:
    """Summary of parsed logprobs, chat lists or completion objects, positions of any width."""
    sampled: list[float] = []
    margins: list[float] = []
    for value in per_choice.values():
        if isinstance(value, list):
            rows = [
                (e.get("logprob"), [a["logprob"] for a in e.get("top_logprobs") or []])
                for e in value
            ]
        else:
            tops = value.get("top_logprobs") or []
            lps = value.get("token_logprobs") or []
            rows = [(lp, list((t or {}).values())) for lp, t in zip(lps, tops, strict=False)]
        for lp, alternatives in rows:
            if lp is not None:
                sampled.append(lp)
            if len(alternatives) >= 2:
                first, second = sorted(alternatives, reverse=True)[:2]
                margins.append(float(np.exp(first) - np.exp(second)))
    mean = float(np.mean(sampled)) if sampled else None
    if not margins:
        return LogprobSummary(mean, None, 0)
    return LogprobSummary(mean, min(margins), sum(1 for m in margins if m < margin))
