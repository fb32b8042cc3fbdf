"""Per-question and per-run scoring of a sample frame."""

from __future__ import annotations

import pandas as pd
import pytest

from evals.divergence import SampleTrace, TokenStep, TopLogprob, first_divergence
from evals.scoring import RunInfo, SampleFrameError, score_run
from tests.evals.synthetic_runs import sample_frame, uniform


def _run(**kwargs: object) -> pd.DataFrame:
    answers = {
        "cap": uniform({"12 month": 90, "24 month": 8, None: 2}),
        "law": uniform({"england": 100}),
        "fail": uniform({None: 100}),
    }
    return sample_frame(answers, **kwargs)  # type: ignore[arg-type]


def test_question_statistics() -> None:
    score = score_run(
        _run(), RunInfo("contracts", "r1"), expected_keys={"cap": "12 month"}, critical={"cap"}
    )
    q = score.questions.set_index("question_id")
    cap = q.loc["cap"]
    assert (cap["modal_answer"], cap["modal_count"], cap["n_answers"]) == ("12 month", 90, 4)
    assert cap["agreement"] == 0.9
    assert (round(cap["agreement_lower"], 3), round(cap["agreement_upper"], 3)) == (0.826, 0.945)
    assert cap["pairwise_agreement"] == pytest.approx((90 * 89 + 8 * 7) / (100 * 99))
    assert cap["parse_failures"] == 2
    assert cap["accuracy"] == 0.9
    assert bool(cap["critical"])
    assert q.loc["law", "agreement"] == 1.0
    assert q.loc["law", "entropy"] == 0.0
    # Every failure is its own outcome: 100 failures agree with nothing.
    fail = q.loc["fail"]
    assert pd.isna(fail["modal_answer"])
    assert (fail["agreement"], fail["n_answers"], fail["pairwise_agreement"]) == (0.01, 100, 0.0)
    assert score.agreement.point == pytest.approx((0.9 + 1.0 + 0.01) / 3)
    assert score.agreement.method == "cluster_wilson"
    assert score.all_agree_share == pytest.approx(1 / 3)
    assert score.parse_failure_rate == pytest.approx(102 / 300)
    assert score.worst_questions(1)["question_id"].tolist() == ["fail"]


def test_paraphrase_that_breaks_the_answer_is_found() -> None:
    paraphrases: list[list[str | None]] = [["12"] * 5 for _ in range(20)]
    paraphrases[7] = ["24"] * 4 + ["12"]
    score = score_run(sample_frame({"cap": paraphrases}), RunInfo("s", "r"))
    row = score.questions.iloc[0]
    assert (
        row["paraphrases_breaking"],
        row["worst_paraphrase"],
        row["worst_paraphrase_share"],
    ) == (1, 7, 0.2)
    seventh = score.paraphrases.set_index("paraphrase_index").loc[7]
    assert (
        seventh["modal_answer"],
        seventh["modal_share"],
        bool(seventh["matches_question_mode"]),
    ) == ("24", 0.8, False)
    assert "paraphrase_breaks" in row["flags"]


def test_context_limit_flags() -> None:
    frame = _run(
        prompt_tokens={"cap": 31_500, "law": 1_000, "fail": 1_000},
        max_model_len={"cap": 32_768, "law": 32_768, "fail": 32_768},
        finish_reason={"cap": "stop", "law": "stop", "fail": "length"},
    )
    score = score_run(frame, RunInfo("s", "r"))
    q = score.questions.set_index("question_id")
    assert bool(q.loc["cap", "context_near_limit"])
    assert not bool(q.loc["cap", "output_truncated"])
    assert bool(q.loc["fail", "output_truncated"])
    assert not bool(q.loc["law", "context_flag"])
    assert score.context_flagged == ["cap", "fail"]


def _trace(tokens: list[str], answer: str, tops: list[tuple[str, float]]) -> SampleTrace:
    steps = [TokenStep(t, -0.01, ()) for t in tokens]
    steps[2] = TokenStep(
        tokens[2], dict(tops)[tokens[2]], tuple(TopLogprob(t, lp) for t, lp in tops)
    )
    return SampleTrace(answer, tuple(steps))


def test_greedy_disagreement_at_a_near_tie_is_serving_nondeterminism() -> None:
    near = [(" 12", -0.777), (" 24", -0.892)]
    clear = [(" 12", -0.02), (" 24", -4.6)]
    frame = sample_frame(
        {"near": [["12"] * 4 + ["24"]], "clear": [["12"] * 4 + ["24"]], "same": [["12"] * 5]}
    )
    divergences = {
        name: first_divergence(
            [_trace(["Cap", " is", " 12"], "12", tops)] * 4
            + [_trace(["Cap", " is", " 24"], "24", tops)]
        )
        for name, tops in (("near", near), ("clear", clear))
    }
    score = score_run(
        frame,
        RunInfo("s", "r", greedy=True),
        divergences={k: v for k, v in divergences.items() if v},
    )
    labels = score.questions.set_index("question_id")["repeatability"]
    assert labels.to_dict() == {
        "clear": "backend_or_model_change",
        "near": "serving_nondeterminism",
        "same": "repeatable",
    }


def test_bad_frames_are_refused() -> None:
    with pytest.raises(
        SampleFrameError, match="lacks columns: paraphrase_index, sample_index, answer_key"
    ):
        score_run(pd.DataFrame({"question_id": ["q"]}), RunInfo("s", "r"))
    frame = _run()
    with pytest.raises(SampleFrameError, match="duplicate sample"):
        score_run(pd.concat([frame, frame.head(1)]), RunInfo("s", "r"))
    both = frame.assign(parse_error="x")
    with pytest.raises(SampleFrameError, match="both answer_key and parse_error"):
        score_run(both, RunInfo("s", "r"))


def test_a_row_without_key_or_error_is_a_failure_not_agreement() -> None:
    frame = sample_frame({"q": [["a", "a", "a", "a", "a"]]})
    frame.loc[0, "answer_key"] = None
    frame.loc[0, "parse_error"] = None
    row = score_run(frame, RunInfo("s", "r")).questions.iloc[0]
    assert (row["agreement"], row["parse_failures"]) == (0.8, 1)
