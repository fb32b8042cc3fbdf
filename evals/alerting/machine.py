"""The alert state machine: previous state + a run's observation -> new state + decisions."""

from __future__ import annotations

from dataclasses import replace

from evals.alerting.decision import Action, AlertDecision, AlertEvaluation
from evals.alerting.observation import RegressionEvidence, RunObservation
from evals.alerting.policy import AlertPolicy, LevelRule, RegressionRule
from evals.alerting.state import (
    QUESTION_PREFIX,
    REGRESSION_KEY,
    SUITE_KEY,
    AlertState,
    AlertStatus,
    RuleState,
    question_key,
)
from evals.scoring.statistics import Estimate

Step = tuple[RuleState, AlertDecision]


def evaluate_alerts(
    state: AlertState, observation: RunObservation, policy: AlertPolicy
) -> AlertEvaluation:
    """Apply every rule of the policy to one run; pure, so a retried run gives the same result."""
    decisions: list[AlertDecision] = []
    new_state = replace(state, last_run_id=observation.run_id)
    steps: list[tuple[str, Step]] = [
        (
            SUITE_KEY,
            _level_step(
                SUITE_KEY,
                state.rule(SUITE_KEY),
                observation.agreement,
                policy.suite,
                observation.run_id,
                policy,
            ),
        )
    ]
    tracked = {k[len(QUESTION_PREFIX) :] for k in state.rules if k.startswith(QUESTION_PREFIX)}
    for question_id in sorted(tracked | set(observation.questions)):
        key = question_key(question_id)
        estimate = observation.questions.get(question_id)
        steps.append(
            (
                key,
                _level_step(
                    key, state.rule(key), estimate, policy.critical, observation.run_id, policy
                ),
            )
        )
    if policy.regression.enabled:
        regression = _regression_step(
            state.rule(REGRESSION_KEY),
            observation.regression,
            policy.regression,
            observation.run_id,
            policy,
        )
        steps.append((REGRESSION_KEY, regression))
    for key, (rule_state, decision) in steps:
        new_state = new_state.with_rule(key, rule_state)
        decisions.append(decision)
    return AlertEvaluation(new_state, tuple(decisions))


def acknowledge(state: AlertState, key: str, by: str) -> AlertState:
    """Mark a firing alert acknowledged: it keeps firing but never re-notifies until resolved."""
    rule = state.rule(key)
    if not rule.status.active:
        raise ValueError(f"alert {key!r} is {rule.status.value}, not firing")
    return state.with_rule(key, replace(rule, status=AlertStatus.ACKNOWLEDGED, acknowledged_by=by))


def regression_baseline(state: AlertState, previous_run_id: str | None) -> str | None:
    """Which run the next run should be compared with: the pre-drop run while a drop is firing."""
    rule = state.rule(REGRESSION_KEY)
    return rule.baseline_run_id if rule.status.active and rule.baseline_run_id else previous_run_id


def _level_step(
    key: str,
    prior: RuleState,
    estimate: Estimate | None,
    rule: LevelRule,
    run_id: str,
    policy: AlertPolicy,
) -> Step:
    if estimate is None:
        return prior, AlertDecision(
            key, Action.NOTHING, False, prior.status, ("no data in this run",)
        )
    value = estimate.bound(rule.bound)
    breach = value < rule.threshold
    breach_text = (
        f"{rule.bound.value} {value:.3f} {'<' if breach else '>='} threshold {rule.threshold:.3f}"
    )
    if not prior.status.active:
        return _open_step(key, prior, breach, rule.consecutive, breach_text, run_id)
    level = estimate.bound(rule.recover_bound)
    recovered = level >= rule.recover_at
    sign = ">=" if recovered else "<"
    recover_text = f"{rule.recover_bound.value} {level:.3f} {sign} recover {rule.recover_at:.3f}"
    return _active_step(key, prior, recovered, rule.recover_consecutive, recover_text, policy)


def _regression_step(
    prior: RuleState,
    evidence: RegressionEvidence | None,
    rule: RegressionRule,
    run_id: str,
    policy: AlertPolicy,
) -> Step:
    if evidence is None:
        return prior, AlertDecision(
            REGRESSION_KEY,
            Action.NOTHING,
            False,
            prior.status,
            ("no baseline run to compare with",),
        )
    drop = evidence.p_value < rule.alpha and evidence.delta <= -rule.min_drop
    text = (
        f"change vs {evidence.baseline_run_id or 'baseline'} {evidence.delta:+.3f} "
        f"[{evidence.lower:+.3f}, {evidence.upper:+.3f}], p={evidence.p_value:.2g} "
        f"({'a real drop' if drop else 'no real drop'} at alpha {rule.alpha}, min {rule.min_drop})"
    )
    if not prior.status.active:
        new, decision = _open_step(REGRESSION_KEY, prior, drop, 1, text, run_id)
        if decision.action is Action.FIRE:
            new = replace(new, baseline_run_id=evidence.baseline_run_id)
        return new, decision
    reasons_extra: tuple[str, ...] = ()
    if prior.baseline_run_id and evidence.baseline_run_id != prior.baseline_run_id:
        reasons_extra = (
            f"compared with {evidence.baseline_run_id}, not pre-drop {prior.baseline_run_id}",
        )
    new, decision = _active_step(
        REGRESSION_KEY, prior, not drop, rule.recover_consecutive, text, policy
    )
    return new, replace(decision, reasons=decision.reasons + reasons_extra)


def _open_step(
    key: str, prior: RuleState, breach: bool, needed: int, text: str, run_id: str
) -> Step:
    if not breach:
        return RuleState(), AlertDecision(key, Action.NOTHING, False, AlertStatus.OK, (text,))
    breaches = prior.breaches + 1
    if breaches < needed:
        new = RuleState(status=AlertStatus.PENDING, breaches=breaches)
        return new, AlertDecision(
            key, Action.NOTHING, False, new.status, (text, f"breach {breaches} of {needed} needed")
        )
    new = RuleState(status=AlertStatus.FIRING, breaches=breaches, fired_run_id=run_id)
    reasons = (text, f"{breaches} consecutive breaching run(s)")
    return new, AlertDecision(key, Action.FIRE, True, new.status, reasons)


def _active_step(
    key: str, prior: RuleState, recovered: bool, needed: int, text: str, policy: AlertPolicy
) -> Step:
    if recovered:
        recoveries = prior.recoveries + 1
        if recoveries >= needed:
            return RuleState(), AlertDecision(key, Action.RESOLVE, True, AlertStatus.OK, (text,))
        new = replace(
            prior, recoveries=recoveries, runs_since_notified=prior.runs_since_notified + 1
        )
        return new, AlertDecision(
            key,
            Action.STAY_FIRING,
            False,
            new.status,
            (text, f"recovery {recoveries} of {needed} needed"),
        )
    since = prior.runs_since_notified + 1
    renotify = (
        prior.status is AlertStatus.FIRING
        and policy.renotify_after_runs is not None
        and since >= policy.renotify_after_runs
    )
    new = replace(prior, recoveries=0, runs_since_notified=0 if renotify else since)
    reasons = (
        (text, "acknowledged by " + str(prior.acknowledged_by))
        if prior.acknowledged_by
        else (text,)
    )
    return new, AlertDecision(key, Action.STAY_FIRING, renotify, new.status, reasons)
