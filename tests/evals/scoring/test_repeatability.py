"""Greedy repeatability is judged per paraphrase: wording sensitivity is not nondeterminism."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evals.divergence import (
    DivergenceReport,
    SampleTrace,
    TokenStep,
    TopLogprob,
    first_divergence,
)
from evals.scoring import RunInfo, score_run
from tests.evals.synthetic_runs import sample_frame

NEAR = [(" 12", -0.777), (" 24", -0.892)]
CLEAR = [(" 12", -0.02), (" 24", -4.6)]


def trace(answer: str, tops: list[tuple[str, float]]) -> SampleTrace:
    token = f" {answer}"
    steps = (
        TokenStep("Cap", -0.01, ()),
        TokenStep(" is", -0.01, ()),
        TokenStep(token, dict(tops)[token], tuple(TopLogprob(t, lp) for t, lp in tops)),
    )
    return SampleTrace(answer, steps)


def divergence(answers: list[str], tops: list[tuple[str, float]]) -> DivergenceReport:
    report = first_divergence([trace(a, tops) for a in answers])
    assert report is not None
    return report


def labels(frame: pd.DataFrame, **kwargs: Any) -> dict[str, str]:
    score = score_run(frame, RunInfo("s", "r", greedy=True), **kwargs)
    return dict(score.questions.set_index("question_id")["repeatability"].to_dict())


def test_paraphrases_that_each_repeat_their_own_answer_are_repeatable() -> None:
    # The bug: two wordings, each answered identically five times, but differently from each
    # other, were labelled by the question's divergence as a backend change.
    frame = sample_frame({"cap": [["12"] * 5, ["24"] * 5]})
    across = divergence(["12"] * 5 + ["24"] * 5, CLEAR)
    assert not across.near_tie
    assert labels(frame, divergences={"cap": across}, paraphrase_divergences={}) == {
        "cap": "repeatable"
    }


def test_a_paraphrase_flipping_at_a_near_tie_is_serving_nondeterminism() -> None:
    frame = sample_frame({"cap": [["12"] * 4 + ["24"], ["24"] * 5]})
    within = divergence(["12"] * 4 + ["24"], NEAR)
    assert labels(frame, paraphrase_divergences={("cap", 0): within}) == {
        "cap": "serving_nondeterminism"
    }


def test_the_worst_paraphrase_decides() -> None:
    frame = sample_frame({"cap": [["12"] * 4 + ["24"], ["12"] * 3 + ["24"] * 2, ["12"] * 5]})
    per_paraphrase = {
        ("cap", 0): divergence(["12"] * 4 + ["24"], NEAR),
        ("cap", 1): divergence(["12"] * 3 + ["24"] * 2, CLEAR),
    }
    assert labels(frame, paraphrase_divergences=per_paraphrase) == {
        "cap": "backend_or_model_change"
    }


def test_a_split_paraphrase_without_logprobs_is_unexplained() -> None:
    frame = sample_frame({"cap": [["12"] * 5, ["12", "24", "12", "12", "12"]]})
    assert labels(frame, paraphrase_divergences={}) == {"cap": "unexplained_no_logprobs"}
