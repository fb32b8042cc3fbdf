"""The alert state machine: fire, stay firing, resolve with hysteresis, acknowledge, regression."""

from __future__ import annotations

import pytest

from evals.alerting import (
    REGRESSION_KEY,
    SUITE_KEY,
    Action,
    AlertPolicy,
    AlertState,
    AlertStatus,
    RegressionEvidence,
    RunObservation,
    acknowledge,
    evaluate_alerts,
    observe_run,
    question_key,
    regression_baseline,
)
from evals.alerting.policy import LevelRule
from evals.scoring import Estimate, RunInfo, score_run
from tests.evals.synthetic_runs import sample_frame, uniform

POLICY = AlertPolicy(renotify_after_runs=3)


def _run(
    state: AlertState, run_id: str, point: float, lower: float, upper: float, **kw: object
) -> tuple[AlertState, Action, bool]:
    observation = RunObservation(run_id, Estimate(point, lower, upper, "cluster_wilson"), **kw)  # type: ignore[arg-type]
    evaluation = evaluate_alerts(state, observation, POLICY)
    decision = evaluation.decision(SUITE_KEY)
    assert decision is not None
    return evaluation.state, decision.action, decision.notify


def test_fires_after_two_breaches_stays_silent_and_resolves_with_hysteresis() -> None:
    state = AlertState()
    state, action, _ = _run(state, "r1", 0.86, 0.84, 0.88)
    assert (action, state.rule(SUITE_KEY).status) == (Action.NOTHING, AlertStatus.PENDING)
    state, action, notify = _run(state, "r2", 0.86, 0.84, 0.88)
    assert (action, notify, state.rule(SUITE_KEY).fired_run_id) == (Action.FIRE, True, "r2")
    # Back above the threshold but not above the recover level: still firing, no message.
    state, action, notify = _run(state, "r3", 0.915, 0.905, 0.925)
    assert (action, notify) == (Action.STAY_FIRING, False)
    state, action, notify = _run(state, "r4", 0.94, 0.93, 0.95)
    assert (action, notify, state.rule(SUITE_KEY).status) == (Action.RESOLVE, True, AlertStatus.OK)


def test_noise_with_an_upper_bound_above_the_threshold_never_pages() -> None:
    state = AlertState()
    for i in range(5):
        state, action, _ = _run(state, f"r{i}", 0.89, 0.85, 0.93)
        assert action is Action.NOTHING


def test_a_single_breach_between_good_runs_resets() -> None:
    state, _, _ = _run(AlertState(), "r1", 0.86, 0.84, 0.88)
    state, _, _ = _run(state, "r2", 0.95, 0.94, 0.96)
    state, action, _ = _run(state, "r3", 0.86, 0.84, 0.88)
    assert (action, state.rule(SUITE_KEY).breaches) == (Action.NOTHING, 1)


def test_renotify_unless_acknowledged() -> None:
    state = AlertState()
    for i in range(2):
        state, _, _ = _run(state, f"r{i}", 0.8, 0.78, 0.82)
    notified = []
    for i in range(2, 5):
        state, action, notify = _run(state, f"r{i}", 0.8, 0.78, 0.82)
        notified.append((action, notify))
    assert notified == [
        (Action.STAY_FIRING, False),
        (Action.STAY_FIRING, False),
        (Action.STAY_FIRING, True),
    ]
    acked = acknowledge(state, SUITE_KEY, "oncall@example.com")
    assert acked.rule(SUITE_KEY).status is AlertStatus.ACKNOWLEDGED
    for i in range(5, 10):
        acked, action, notify = _run(acked, f"r{i}", 0.8, 0.78, 0.82)
        assert (action, notify) == (Action.STAY_FIRING, False)
    acked, action, notify = _run(acked, "r10", 0.95, 0.94, 0.96)
    assert (action, notify, acked.rule(SUITE_KEY).acknowledged_by) == (Action.RESOLVE, True, None)
    with pytest.raises(ValueError, match="not firing"):
        acknowledge(acked, SUITE_KEY, "x")


def test_state_round_trips_through_json_form() -> None:
    state = AlertState()
    for i in range(2):
        state, _, _ = _run(state, f"r{i}", 0.8, 0.78, 0.82)
    state = acknowledge(state, SUITE_KEY, "me")
    assert AlertState.from_dict(state.to_dict()) == state


def test_critical_questions_use_their_wilson_intervals() -> None:
    answers = {"cap": uniform({"12": 70, "24": 30}), "law": uniform({"england": 100})}
    score = score_run(sample_frame(answers), RunInfo("s", "r1"), critical={"cap", "law"})
    policy = AlertPolicy(critical=LevelRule(consecutive=1, recover_bound="point"))  # type: ignore[arg-type]
    evaluation = evaluate_alerts(AlertState(), observe_run(score), policy)
    cap = evaluation.decision(question_key("cap"))
    law = evaluation.decision(question_key("law"))
    assert cap is not None
    assert law is not None
    assert (cap.action, law.action) == (Action.FIRE, Action.NOTHING)
    assert "upper 0.781 < threshold 0.900" in cap.reasons[0]


def test_regression_fires_on_a_real_drop_and_compares_with_the_pre_drop_run() -> None:
    agreement = Estimate(0.95, 0.94, 0.96, "cluster_wilson")
    drop = RegressionEvidence("r1", -0.04, -0.05, -0.03, 1e-6)
    evaluation = evaluate_alerts(
        AlertState(), RunObservation("r2", agreement, regression=drop), POLICY
    )
    decision = evaluation.decision(REGRESSION_KEY)
    assert decision is not None
    assert decision.action is Action.FIRE
    assert regression_baseline(evaluation.state, previous_run_id="r2") == "r1"
    small = RegressionEvidence("r1", -0.01, -0.015, -0.005, 1e-4)
    evaluation = evaluate_alerts(
        evaluation.state, RunObservation("r3", agreement, regression=small), POLICY
    )
    decision = evaluation.decision(REGRESSION_KEY)
    assert decision is not None
    assert decision.action is Action.RESOLVE
    assert regression_baseline(evaluation.state, previous_run_id="r3") == "r3"
    noisy = RegressionEvidence("r3", -0.05, -0.12, 0.02, 0.2)
    evaluation = evaluate_alerts(
        evaluation.state, RunObservation("r4", agreement, regression=noisy), POLICY
    )
    decision = evaluation.decision(REGRESSION_KEY)
    assert decision is not None
    assert decision.action is Action.NOTHING


def test_no_data_keeps_the_state() -> None:
    state = AlertState()
    for i in range(2):
        state, _, _ = _run(state, f"r{i}", 0.8, 0.78, 0.82)
    evaluation = evaluate_alerts(state, RunObservation("r3", None), POLICY)
    decision = evaluation.decision(SUITE_KEY)
    assert decision is not None
    assert decision.action is Action.NOTHING
    assert evaluation.state.rule(SUITE_KEY).status is AlertStatus.FIRING
