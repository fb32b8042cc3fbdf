"""Alerting: a pure state machine over run observations, with hysteresis and acknowledgement."""

from evals.alerting.channels import ChannelKind, NotifyChannel, NotifyTarget
from evals.alerting.decision import Action, AlertDecision, AlertEvaluation
from evals.alerting.machine import acknowledge, evaluate_alerts, regression_baseline
from evals.alerting.observation import RegressionEvidence, RunObservation, observe_run
from evals.alerting.policy import AlertPolicy, LevelRule, RegressionRule
from evals.alerting.power import QuestionPopulation, simulate_modal_counts, suite_fire_rate
from evals.alerting.state import (
    REGRESSION_KEY,
    SUITE_KEY,
    AlertState,
    AlertStatus,
    RuleState,
    question_key,
)

__all__ = [
    "REGRESSION_KEY",
    "SUITE_KEY",
    "Action",
    "AlertDecision",
    "AlertEvaluation",
    "AlertPolicy",
    "AlertState",
    "AlertStatus",
    "ChannelKind",
    "LevelRule",
    "NotifyChannel",
    "NotifyTarget",
    "QuestionPopulation",
    "RegressionEvidence",
    "RegressionRule",
    "RuleState",
    "RunObservation",
    "acknowledge",
    "evaluate_alerts",
    "observe_run",
    "question_key",
    "regression_baseline",
    "simulate_modal_counts",
    "suite_fire_rate",
]
