"""How often a suite's alert rule fires at a given true agreement: a vectorised Monte Carlo.

The simulated world: each question has its own chance p_i of its main answer, drawn from
Beta(mean * c, (1 - mean) * c) (heterogeneous questions: most near 1, a few unstable); each frozen
paraphrase shifts it, p_ik ~ Beta(p_i * phi, (1 - p_i) * phi); the rest of the mass goes to a few
wrong answers with question-specific Dirichlet weights. Questions, paraphrases and weights are
fixed per suite; each run redraws only the samples (multinomial), as real scheduled runs do.
The suite rule is applied by the real interval and state machine, not a re-implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evals.alerting.decision import Action
from evals.alerting.machine import evaluate_alerts
from evals.alerting.observation import RunObservation
from evals.alerting.policy import AlertPolicy, RegressionRule
from evals.alerting.state import SUITE_KEY, AlertState
from evals.scoring.statistics import Estimate, agreement_interval

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class QuestionPopulation:
    """Where a suite's questions come from."""

    mean_agreement: float
    question_concentration: float = 5.0
    paraphrase_concentration: float = 50.0
    wrong_answers: int = 3


def simulate_modal_counts(
    population: QuestionPopulation,
    *,
    suites: int,
    questions: int,
    paraphrases: int,
    samples: int,
    runs: int,
    rng: np.random.Generator,
) -> IntArray:
    """Modal-answer counts, shape (runs, suites, questions), out of paraphrases x samples each."""
    mu, c, phi = (
        population.mean_agreement,
        population.question_concentration,
        population.paraphrase_concentration,
    )
    p_question = rng.beta(mu * c, (1.0 - mu) * c, size=(suites, questions, 1))
    p_question = np.clip(p_question, 1e-9, 1.0 - 1e-9)
    p_paraphrase = rng.beta(
        p_question * phi, (1.0 - p_question) * phi, size=(suites, questions, paraphrases)
    )
    weights = rng.dirichlet(np.ones(population.wrong_answers), size=(suites, questions))
    out = np.empty((runs, suites, questions), dtype=np.int64)
    for run in range(runs):
        main = rng.binomial(samples, p_paraphrase).sum(axis=-1)
        remaining = paraphrases * samples - main
        counts = [main]
        left = np.ones((suites, questions))
        for j in range(population.wrong_answers - 1):
            share = np.clip(weights[..., j] / np.maximum(left, 1e-12), 0.0, 1.0)
            drawn = rng.binomial(remaining, share)
            counts.append(drawn)
            remaining = remaining - drawn
            left = left - weights[..., j]
        counts.append(remaining)
        out[run] = np.max(np.stack(counts), axis=0)
    return out


def suite_fire_rate(
    policy: AlertPolicy,
    population: QuestionPopulation,
    *,
    questions: int,
    paraphrases: int = 20,
    samples: int = 5,
    suites: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> float:
    """Share of simulated suites whose suite-level alert fires within `consecutive` runs."""
    rng = np.random.default_rng(seed)
    runs = policy.suite.consecutive
    counts = simulate_modal_counts(
        population,
        suites=suites,
        questions=questions,
        paraphrases=paraphrases,
        samples=samples,
        runs=runs,
        rng=rng,
    )
    totals = np.full(counts.shape, paraphrases * samples, dtype=float)
    point, lower, upper = agreement_interval(counts.astype(float), totals, confidence)
    suite_only = policy.model_copy(update={"regression": RegressionRule(enabled=False)})
    fired = 0
    for suite in range(suites):
        state = AlertState()
        for run in range(runs):
            estimate = Estimate(
                float(point[run, suite]),
                float(lower[run, suite]),
                float(upper[run, suite]),
                "cluster_wilson",
            )
            evaluation = evaluate_alerts(state, RunObservation(f"run-{run}", estimate), suite_only)
            state = evaluation.state
            decision = evaluation.decision(SUITE_KEY)
            if decision is not None and decision.action is Action.FIRE:
                fired += 1
                break
    return fired / suites
