"""What the alert rules read from a scored run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evals.scoring import RunScore
from evals.scoring.statistics import Estimate


@dataclass(frozen=True, slots=True)
class RegressionEvidence:
    """The paired change against a baseline run."""

    baseline_run_id: str | None
    delta: float
    lower: float
    upper: float
    p_value: float


@dataclass(frozen=True, slots=True)
class RunObservation:
    """A run as alerting sees it: suite agreement, critical questions, change vs baseline."""

    run_id: str
    agreement: Estimate | None
    questions: Mapping[str, Estimate] = field(default_factory=dict)
    regression: RegressionEvidence | None = None


def observe_run(score: RunScore) -> RunObservation:
    """The alerting view of a scored run (critical questions with their Wilson intervals)."""
    critical = score.questions[score.questions["critical"]]
    questions = {
        str(qid): Estimate(float(point), float(lower), float(upper), "wilson")
        for qid, point, lower, upper in zip(
            critical["question_id"],
            critical["agreement"],
            critical["agreement_lower"],
            critical["agreement_upper"],
            strict=True,
        )
    }
    comparison = score.comparison
    regression = None
    if comparison is not None and comparison.n_paired >= 2:
        regression = RegressionEvidence(
            comparison.baseline_run_id,
            comparison.delta,
            comparison.lower,
            comparison.upper,
            comparison.p_value,
        )
    return RunObservation(score.info.run_id, score.agreement, questions, regression)
