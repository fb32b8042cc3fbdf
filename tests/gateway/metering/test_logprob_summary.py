"""Mean logprob, the smallest top-1/top-2 margin and near ties."""

from __future__ import annotations

import math

import pytest

from gateway.metering.logprob_codec import CHAT, COMPLETION
from gateway.metering.logprob_summary import summarize_logprobs


def _entry(token: str, lp: float, top: list[tuple[str, float]]) -> dict[str, object]:
    return {
        "token": token,
        "logprob": lp,
        "bytes": list(token.encode()),
        "top_logprobs": [{"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top],
    }


def test_near_tie_at_the_divergent_token() -> None:
    entries = [
        _entry(" The", math.log(0.97), [(" The", math.log(0.97)), (" A", math.log(0.02))]),
        # The sampled token comes first even when it is not the most likely one.
        _entry(" 24", math.log(0.41), [(" 24", math.log(0.41)), (" 12", math.log(0.46))]),
    ]
    summary = summarize_logprobs(CHAT, {0: entries})
    assert summary.mean_logprob == pytest.approx((math.log(0.97) + math.log(0.41)) / 2)
    assert summary.min_margin == pytest.approx(0.05)
    assert summary.near_ties == 1


def test_without_alternatives_there_is_no_margin() -> None:
    summary = summarize_logprobs(CHAT, {0: [_entry("a", -0.5, [])]})
    assert summary.min_margin is None
    assert summary.near_ties == 0


def test_completion_format() -> None:
    lp = {
        "text_offset": [0, 1],
        "token_logprobs": [None, math.log(0.5)],
        "tokens": ["a", "b"],
        "top_logprobs": [None, {"b": math.log(0.5), "c": math.log(0.45)}],
    }
    summary = summarize_logprobs(COMPLETION, {0: lp})
    assert summary.mean_logprob == pytest.approx(math.log(0.5))
    assert summary.near_ties == 1
