"""Is a change between two runs real? Paired by question."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evals.scoring import ChangeVerdict, compare_runs


def _questions(agreement: np.ndarray, modal: list[str] | None = None) -> pd.DataFrame:
    ids = [f"q{i}" for i in range(len(agreement))]
    return pd.DataFrame(
        {"question_id": ids, "agreement": agreement, "modal_answer": modal or ["a"] * len(ids)}
    )


def test_real_drop_rise_negligible_and_no_change() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.85, 1.0, 200)
    noise = rng.normal(0, 0.02, 200)
    drop = compare_runs(_questions(base), _questions(base - 0.05 + noise), baseline_run_id="r1")
    assert drop.verdict is ChangeVerdict.DROP
    assert drop.lower < -0.05 < drop.upper
    assert drop.p_value < 1e-10
    assert (
        compare_runs(_questions(base), _questions(base + 0.05 + noise)).verdict
        is ChangeVerdict.RISE
    )
    small = compare_runs(_questions(base), _questions(base - 0.005 + noise / 10))
    assert small.verdict is ChangeVerdict.NEGLIGIBLE
    same = compare_runs(_questions(base), _questions(base + noise))
    assert same.verdict is ChangeVerdict.NO_CHANGE


def test_modal_answer_changes_are_counted_and_unpaired_questions_reported() -> None:
    base = _questions(np.array([1.0, 1.0, 0.9]), ["12", "a", "b"])
    current = _questions(np.array([1.0, 1.0]), ["24", "a"])
    comparison = compare_runs(base, current)
    assert (comparison.modal_changed, comparison.only_in_baseline, comparison.n_paired) == (1, 1, 2)


def test_false_positive_rate_under_no_change_is_about_alpha() -> None:
    # Two runs of the same suite (same questions, same paraphrases), only samples redrawn.
    rng = np.random.default_rng(5)
    trials, questions = 400, 200
    p = np.clip(rng.beta(0.9 * 5, 0.1 * 5, size=(trials, questions)), 1e-6, 1 - 1e-6)
    shares = rng.binomial(100, p, size=(2, trials, questions)) / 100
    ids = [f"q{i}" for i in range(questions)]
    rejections = 0
    for t in range(trials):
        a = pd.DataFrame({"question_id": ids, "agreement": shares[0, t], "modal_answer": "x"})
        b = pd.DataFrame({"question_id": ids, "agreement": shares[1, t], "modal_answer": "x"})
        rejections += compare_runs(a, b, alpha=0.05, min_effect=0.0).p_value < 0.05
    assert 0.02 <= rejections / trials <= 0.09
