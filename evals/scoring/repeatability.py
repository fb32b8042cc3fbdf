"""Temperature-0 suites: tell serving nondeterminism at near ties from a real change."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from evals.divergence import DivergenceReport


class Repeatability(StrEnum):
    """Why a greedy question did or did not give the same answer every time."""

    REPEATABLE = "repeatable"
    SERVING_NONDETERMINISM = "serving_nondeterminism"
    BACKEND_OR_MODEL_CHANGE = "backend_or_model_change"
    UNEXPLAINED = "unexplained_no_logprobs"


def repeatability(unstable: Sequence[DivergenceReport | None]) -> Repeatability:
    """Label a greedy question from the paraphrases whose repeated samples disagreed.

    Judged per paraphrase: each paraphrase is one prompt sent several times, so its greedy
    answers should all be the same. Different paraphrases are different prompts; greedy
    decoding may answer them differently, and that is sensitivity to wording (which agreement
    measures), not a repeatability problem. `unstable` holds, for each paraphrase whose own
    samples disagree, the first divergent token among those samples (None without logprobs).

    Batch composition only reorders floating-point sums, which can flip a near tie but not a
    clear winner. A flip at a clear token means the requests did not see the same model (mixed
    backends, versions or quantisation): not nondeterminism. The worst paraphrase decides.
    """
    if not unstable:
        return Repeatability.REPEATABLE
    if any(report is not None and not report.near_tie for report in unstable):
        return Repeatability.BACKEND_OR_MODEL_CHANGE
    if any(report is None for report in unstable):
        return Repeatability.UNEXPLAINED
    return Repeatability.SERVING_NONDETERMINISM
