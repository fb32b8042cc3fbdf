"""First divergent token on synthetic token data modelled on the indemnity-cap example."""

from __future__ import annotations

import math

from evals.divergence import (
    DivergenceVerdict,
    SampleTrace,
    TokenStep,
    TopLogprob,
    first_divergence,
)

PREFIX = ["The", " indemnity", " cap", " is"]


def _trace(
    figure: str, answer: str | None, tops: dict[str, float], opening: list[str] = PREFIX
) -> SampleTrace:
    top = tuple(TopLogprob(t, math.log(p)) for t, p in tops.items())
    steps = [TokenStep(t, -0.05, (TopLogprob(t, -0.05),)) for t in opening]
    # vLLM puts the sampled token first in top_logprobs even when it is not the most likely.
    sampled_first = tuple(sorted(top, key=lambda t: t.token != figure))
    steps.append(TokenStep(figure, math.log(tops[figure]), sampled_first))
    steps += [TokenStep(" months", -0.01), TokenStep(" of", -0.02), TokenStep(" fees", -0.01)]
    return SampleTrace(answer, tuple(steps))


INDEMNITY = {" 12": 0.46, " 24": 0.41, " 6": 0.13}


def test_indemnity_near_tie_is_reported_unstable_at_the_right_token() -> None:
    traces = (
        [_trace(" 12", "12 month", INDEMNITY)] * 46
        + [_trace(" 24", "24 month", INDEMNITY)] * 41
        + [_trace(" 6", "6 month", INDEMNITY)] * 13
    )
    report = first_divergence(traces, logprobs_mode="raw_logprobs")
    assert report is not None
    assert (report.position, report.prefix) == (4, "The indemnity cap is")
    assert [b.token for b in report.branches] == [" 12", " 24", " 6"]
    assert [round(b.probability or 0, 2) for b in report.branches] == [0.46, 0.41, 0.13]
    assert dict(report.branches[1].answers) == {"24 month": 41}
    assert abs(report.margin - 0.05) < 1e-9
    assert report.near_tie
    assert report.unstable
    assert report.verdict is DivergenceVerdict.NEAR_TIE
    assert (report.modal_answer, report.disagreeing_samples, report.explained_samples) == (
        "12 month",
        54,
        54,
    )
    assert report.logprobs_mode == "raw_logprobs"
    assert report.explanation() == (
        'first divergence after "The indemnity cap is": " 12" p=0.46 vs " 24" p=0.41 (near tie)'
    )


def test_a_99_to_1_question_is_stable() -> None:
    tops = {" 12": 0.99, " 24": 0.01}
    traces = [_trace(" 12", "12 month", tops)] * 99 + [_trace(" 24", "24 month", tops)]
    report = first_divergence(traces, logprobs_mode="processed_logprobs")
    assert report is not None
    assert report.verdict is DivergenceVerdict.RARE_BRANCH
    assert not report.unstable
    assert not report.near_tie
    assert abs(report.margin - 0.98) < 1e-9
    assert report.explanation().endswith('" 12" p=0.99 vs " 24" p=0.01 (rare branch)')


def test_wording_differences_before_the_answer_do_not_hide_the_real_split() -> None:
    # Modal samples word the sentence two ways; the dissenting sample matches the second wording.
    other_opening = ["The", " cap", " on", " indemnity", " is"]
    traces = [
        _trace(" 12", "12 month", INDEMNITY),
        _trace(" 12", "12 month", INDEMNITY, other_opening),
        _trace(" 24", "24 month", INDEMNITY, other_opening),
    ]
    report = first_divergence(traces)
    assert report is not None
    assert (report.position, report.prefix) == (5, "The cap on indemnity is")


def test_no_logprobs_or_no_disagreement_gives_none() -> None:
    assert first_divergence([SampleTrace("12", None), SampleTrace("24", None)]) is None
    same = [_trace(" 12", "12 month", INDEMNITY)] * 5
    assert first_divergence(same) is None
    assert first_divergence([]) is None


def test_parse_failures_and_early_endings_are_branches() -> None:
    ended = SampleTrace(None, tuple(TokenStep(t, -0.05) for t in PREFIX))
    traces = [_trace(" 12", "12 month", INDEMNITY)] * 3 + [ended]
    report = first_divergence(traces)
    assert report is not None
    assert report.position == 4
    end = next(b for b in report.branches if b.token == "<end>")
    assert end.probability is None
    assert dict(end.answers) == {None: 1}


def test_from_chat_logprobs() -> None:
    content = [
        {
            "token": " 24",
            "logprob": -0.89,
            "top_logprobs": [
                {"token": " 24", "logprob": -0.89},
                {"token": " 12", "logprob": -0.78},
            ],
        }
    ]
    trace = SampleTrace.from_chat_logprobs(content, "24")
    assert trace.tokens == (" 24",)
    assert trace.steps is not None
    assert trace.steps[0].top_logprobs[1] == TopLogprob(" 12", -0.78)
    assert SampleTrace.from_chat_logprobs(None, "24").steps is None
