"""Scoring: per-question agreement statistics and question-clustered per-run figures."""

from evals.scoring.compare import ChangeVerdict, RunComparison, compare_runs
from evals.scoring.questions import ModalAnswer, modal_answer, score_questions
from evals.scoring.repeatability import Repeatability, repeatability
from evals.scoring.run import IntervalMethod, RunInfo, RunScore, ScoringOptions, score_run
from evals.scoring.samples import (
    OPTIONAL_DEFAULTS,
    REQUIRED_COLUMNS,
    SampleFrameError,
    prepare_samples,
)
from evals.scoring.statistics import (
    Bound,
    Estimate,
    PairedTest,
    agreement_interval,
    cluster_bootstrap_estimate,
    cluster_entropy,
    cluster_wilson_estimate,
    modal_share,
    normalised_entropy,
    paired_t_test,
    pairwise_agreement,
    wilson_interval,
)

__all__ = [
    "OPTIONAL_DEFAULTS",
    "REQUIRED_COLUMNS",
    "Bound",
    "ChangeVerdict",
    "Estimate",
    "IntervalMethod",
    "ModalAnswer",
    "PairedTest",
    "Repeatability",
    "RunComparison",
    "RunInfo",
    "RunScore",
    "SampleFrameError",
    "ScoringOptions",
    "agreement_interval",
    "cluster_bootstrap_estimate",
    "cluster_entropy",
    "cluster_wilson_estimate",
    "compare_runs",
    "modal_answer",
    "modal_share",
    "normalised_entropy",
    "paired_t_test",
    "pairwise_agreement",
    "prepare_samples",
    "repeatability",
    "score_questions",
    "score_run",
    "wilson_interval",
]
