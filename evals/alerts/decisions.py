"""Apply the alert rules to a scored run, once: state, alert lifecycle, events, notifications."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from evals.alerting import (
    AlertDecision,
    AlertState,
    evaluate_alerts,
    observe_run,
    regression_baseline,
)
from evals.alerts.lifecycle import AlertLifecycle, rule_threshold
from evals.alerts.repository import alerts as alert_repo
from evals.runs.repository import runs as run_repo
from evals.scoring import RunScore
from evals.suite import suite_from_data
from plumbline.models import AlertEvaluation, AlertStateRow, EvalRun
from plumbline.settings import NotifySettings


@dataclass(frozen=True, slots=True)
class AlertOutcome:
    """What deciding a run's alerts did: evaluated, already done, stale or unscored."""

    outcome: str
    decisions: tuple[AlertDecision, ...]
    notification_ids: tuple[int, ...]


def alert_baseline(session: Session, run_id: int) -> int | None:
    """The run to compare with: the pre-drop run while a regression alert fires, else None."""
    run = run_repo.run_by_id(session, run_id, None)
    row = session.get(AlertStateRow, run.suite_id) if run else None
    if run is None or row is None:
        return None
    previous = run_repo.previous_scored_run(session, run.suite_id, run_id)
    chosen = regression_baseline(
        AlertState.from_dict(row.state), str(previous.id) if previous else None
    )
    return int(chosen) if chosen is not None else None


def decide_alerts(
    session: Session,
    run_id: int,
    score: RunScore | None,
    notify: NotifySettings,
    now: datetime,
) -> AlertOutcome:
    """Evaluate the suite's rules on this run, exactly once per run; flushes, never commits."""
    run = run_repo.run_by_id(session, run_id, None)
    if run is None or alert_repo.evaluation_of_run(session, run_id) is not None:
        return AlertOutcome("already", (), ())
    state_row = alert_repo.locked_state(session, run.suite_id, run.team_id)
    if alert_repo.evaluation_of_run(session, run_id) is not None:
        return AlertOutcome("already", (), ())  # decided while we waited for the lock
    state = AlertState.from_dict(state_row.state)
    if score is None or (state.last_run_id is not None and int(state.last_run_id) > run_id):
        outcome = "unscored" if score is None else "stale"
        _record(session, run, outcome, ())
        return AlertOutcome(outcome, (), ())
    policy = suite_from_data(run.definition["suite"]).alert_policy()
    observation = observe_run(score)
    evaluation = evaluate_alerts(state, observation, policy)
    lifecycle = AlertLifecycle(session, run, score, observation, notify, now)
    ids: list[int] = []
    for decision in evaluation.decisions:
        ids.extend(lifecycle.apply(decision, rule_threshold(policy, decision.key)))
    alert_repo.touch(state_row, evaluation.state.to_dict(), run_id, now)
    _record(session, run, "evaluated", evaluation.decisions)
    return AlertOutcome("evaluated", evaluation.decisions, tuple(ids))


def _record(
    session: Session, run: EvalRun, outcome: str, decisions: tuple[AlertDecision, ...]
) -> None:
    rows = [
        {
            "key": d.key,
            "action": d.action.value,
            "notify": d.notify,
            "status": d.status.value,
            "reasons": list(d.reasons),
        }
        for d in decisions
    ]
    alert_repo.add(
        session,
        AlertEvaluation(
            run_id=run.id,
            suite_id=run.suite_id,
            team_id=run.team_id,
            outcome=outcome,
            decisions=rows,
        ),
    )
