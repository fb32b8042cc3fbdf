"""Is a change in agreement between two runs real? Paired by question, the question as the unit."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pandas as pd

from evals.scoring.statistics import paired_t_test


class ChangeVerdict(StrEnum):
    """What the paired comparison concludes."""

    DROP = "drop"
    RISE = "rise"
    NEGLIGIBLE = "negligible"
    NO_CHANGE = "no_change"
    INSUFFICIENT_DATA = "insufficient_data"


@dataclass(frozen=True)
class RunComparison:
    """Mean per-question change in agreement with its interval, p-value and verdict."""

    baseline_run_id: str | None
    delta: float
    lower: float
    upper: float
    p_value: float
    n_paired: int
    only_in_baseline: int
    only_in_current: int
    modal_changed: int
    verdict: ChangeVerdict
    per_question: pd.DataFrame


def compare_runs(
    baseline: pd.DataFrame,
    current: pd.DataFrame,
    *,
    baseline_run_id: str | None = None,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    confidence: float = 0.95,
) -> RunComparison:
    """Paired t test over questions in both runs' question tables (columns from score_questions).

    Pairing removes the between-question spread, so the test sees only sampling noise. A change
    is a drop or rise only when p < alpha and |delta| >= min_effect; significant but smaller
    changes are "negligible". A question whose modal answer changed is counted even when its
    agreement did not move: same share, different answer is drift too.
    """
    columns = ["question_id", "agreement", "modal_answer"]
    paired = baseline[columns].merge(
        current[columns], on="question_id", suffixes=("_baseline", "_current")
    )
    paired["delta"] = paired["agreement_current"] - paired["agreement_baseline"]
    paired["modal_changed"] = (
        (
            paired["modal_answer_baseline"].astype("string")
            != paired["modal_answer_current"].astype("string")
        )
        .fillna(True)
        .astype(bool)
    )
    test = paired_t_test(paired["delta"].tolist(), confidence)
    if test.n < 2:
        verdict = ChangeVerdict.INSUFFICIENT_DATA
    elif test.p_value >= alpha:
        verdict = ChangeVerdict.NO_CHANGE
    elif abs(test.delta) < min_effect:
        verdict = ChangeVerdict.NEGLIGIBLE
    else:
        verdict = ChangeVerdict.DROP if test.delta < 0 else ChangeVerdict.RISE
    ids_baseline, ids_current = set(baseline["question_id"]), set(current["question_id"])
    return RunComparison(
        baseline_run_id=baseline_run_id,
        delta=test.delta,
        lower=test.lower,
        upper=test.upper,
        p_value=test.p_value,
        n_paired=test.n,
        only_in_baseline=len(ids_baseline - ids_current),
        only_in_current=len(ids_current - ids_baseline),
        modal_changed=int(paired["modal_changed"].sum()),
        verdict=verdict,
        per_question=paired,
    )
