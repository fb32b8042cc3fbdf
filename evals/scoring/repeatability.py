"""Temperature-0 suites: tell serving nondeterminism at near ties from a real change."""

from __future__ import annotations

from enum import StrEnum

from evals.divergence import DivergenceReport


class Repeatability(StrEnum):
    """Why a greedy question did or did not give the same answer every time."""

    REPEATABLE = "repeatable"
    SERVING_NONDETERMINISM = "serving_nondeterminism"
    BACKEND_OR_MODEL_CHANGE = "backend_or_model_change"
    UNEXPLAINED = "unexplained_no_logprobs"


def repeatability(n_answers: int, divergence: DivergenceReport | None) -> Repeatability:
    """Label a greedy question's disagreements.

    Greedy decoding takes the argmax; batch composition only reorders floating-point sums, which
    can flip a near tie but not a clear winner. A flip at a clear token means the requests did not
    see the same model (mixed backends, versions or quantisation): not nondeterminism.
    """
    if n_answers <= 1:
        return Repeatability.REPEATABLE
    if divergence is None:
        return Repeatability.UNEXPLAINED
    if divergence.near_tie:
        return Repeatability.SERVING_NONDETERMINISM
    return Repeatability.BACKEND_OR_MODEL_CHANGE
