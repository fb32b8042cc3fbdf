"""Mean logprob, the smallest top-1/top-2 margin and near ties, from raw or parsed logprobs."""

from __future__ import annotations

import math

import orjson
import pytest

from gateway.metering.logprob_summary import summarize_chat, summarize_parsed


def _entry(token: str, lp: float, top: list[tuple[str, float]]) -> dict[str, object]:
    return {
        "token": token,
        "logprob": lp,
        "bytes": list(token.encode()),
        "top_logprobs": [{"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top],
    }


NEAR_TIE = [
    _entry(" The", math.log(0.97), [(" The", math.log(0.97)), (" A", math.log(0.02))]),
    # The sampled token comes first even when it is not the most likely one.
    _entry(" 24", math.log(0.41), [(" 24", math.log(0.41)), (" 12", math.log(0.46))]),
]


@pytest.mark.parametrize("how", ["raw", "parsed"])
def test_near_tie_at_the_divergent_token(how: str) -> None:
    document = orjson.dumps({"0": NEAR_TIE})
    summary = summarize_chat(document) if how == "raw" else summarize_parsed(orjson.loads(document))
    assert summary.mean_logprob == pytest.approx((math.log(0.97) + math.log(0.41)) / 2)
    assert summary.min_margin == pytest.approx(0.05)
    assert summary.near_ties == 1


def test_uneven_lists_fall_back_to_parsing() -> None:
    uneven = [*NEAR_TIE, _entry(" x", -0.1, [(" x", -0.1)])]
    summary = summarize_chat(orjson.dumps({"0": uneven}))
    assert summary.near_ties == 1
    assert summary.mean_logprob == pytest.approx((math.log(0.97) + math.log(0.41) - 0.1) / 3)


def test_token_text_that_looks_like_json_does_not_confuse_the_scan() -> None:
    tricky = [_entry('"logprob":-1,"top_logprobs":', -0.5, [("a", -0.5), ("b", -0.9)])]
    summary = summarize_chat(orjson.dumps({"0": tricky}))
    assert summary.mean_logprob == pytest.approx(-0.5)
    assert summary.min_margin == pytest.approx(math.exp(-0.5) - math.exp(-0.9))


def test_without_alternatives_there_is_no_margin() -> None:
    summary = summarize_chat(orjson.dumps({"0": [_entry("a", -0.5, [])]}))
    assert summary.min_margin is None
    assert summary.near_ties == 0


def test_completion_format() -> None:
    lp = {
        "text_offset": [0, 1],
        "token_logprobs": [None, math.log(0.5)],
        "tokens": ["a", "b"],
        "top_logprobs": [None, {"b": math.log(0.5), "c": math.log(0.45)}],
    }
    summary = summarize_parsed({"0": lp})
    assert summary.mean_logprob == pytest.approx(math.log(0.5))
    assert summary.near_ties == 1
