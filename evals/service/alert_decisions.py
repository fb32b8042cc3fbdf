"""Apply the alert rules to a scored run, once: state, alert lifecycle, events, notifications."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from evals.alerting import (
    REGRESSION_KEY,
    SUITE_KEY,
    Action,
    AlertDecision,
    AlertPolicy,
    AlertState,
    RunObservation,
    evaluate_alerts,
    observe_run,
    regression_baseline,
)
from evals.repository import alerts as alert_repo
from evals.repository import runs as run_repo
from evals.repository import suites as suite_repo
from evals.scoring import RunScore
from evals.service.alert_channels import channel_targets, suite_policy
from evals.service.alert_messages import AlertMessage, rule_figures, summary_line, worst_lines
from evals.service.alert_notify import add_notifications
from evals.suite import suite_from_data
from plumbline.models import Alert, AlertEvaluation, AlertEvent, AlertStateRow, EvalRun
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
    context = _Context(session, run, score, observation, notify, now)
    ids: list[int] = []
    for decision in evaluation.decisions:
        ids.extend(context.apply(decision, _threshold(policy, decision.key)))
    alert_repo.touch(state_row, evaluation.state.to_dict(), run_id, now)
    _record(session, run, "evaluated", evaluation.decisions)
    return AlertOutcome("evaluated", evaluation.decisions, tuple(ids))


def _threshold(policy: AlertPolicy, key: str) -> float:
    if key == SUITE_KEY:
        return policy.suite.threshold
    if key == REGRESSION_KEY:
        return -policy.regression.min_drop
    return policy.critical.threshold


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


@dataclass(slots=True)
class _Context:
    session: Session
    run: EvalRun
    score: RunScore
    observation: RunObservation
    notify: NotifySettings
    now: datetime

    def apply(self, decision: AlertDecision, threshold: float) -> list[int]:
        """Move the alert's row along its lifecycle; returns notifications to deliver."""
        if decision.action is Action.NOTHING:
            return []
        figures = rule_figures(decision.key, self.observation, self.score)
        summary = summary_line(self.score.info.suite, decision, figures)
        details = {
            "reasons": list(decision.reasons),
            "figures": list(figures),
            "run_id": self.run.id,
        }
        open_alert = alert_repo.open_alert(self.session, self.run.suite_id, decision.key)
        alert, kind = self._advance(open_alert, decision, summary, details)
        if alert is None or kind is None:
            return []
        event = alert_repo.add(
            self.session,
            AlertEvent(alert_id=alert.id, run_id=self.run.id, kind=kind, details=details),
        )
        message = self._message(alert, kind, summary, decision, figures, threshold)
        policy = suite_policy(self._suite_settings())
        return add_notifications(
            self.session,
            alert,
            event,
            message,
            channel_targets(policy, self.notify),
            hold_s=self.notify.alertmanager_hold_s,
        )

    def _advance(
        self, alert: Alert | None, decision: AlertDecision, summary: str, details: dict[str, Any]
    ) -> tuple[Alert | None, str | None]:
        """Update the alert's row; the row and the event to record and notify, if any."""
        if decision.action is Action.FIRE or (alert is None and decision.status.active):
            # A state that fired before any alert row existed gets its row now, silently.
            created = alert_repo.add(self.session, self._new_alert(decision, summary, details))
            return created, "fired" if decision.action is Action.FIRE else None
        if alert is None:
            return None, None
        if decision.action is Action.RESOLVE:
            alert_repo.update_alert(
                self.session,
                alert.id,
                status="resolved",
                resolved_at=self.now,
                resolved_run_id=self.run.id,
                last_run_id=self.run.id,
                updated_at=self.now,
                summary=summary,
                details=details,
            )
            return alert, "resolved"
        alert_repo.update_alert(
            self.session, alert.id, last_run_id=self.run.id, updated_at=self.now, details=details
        )
        return alert, "renotified" if decision.notify else None

    def _new_alert(self, decision: AlertDecision, summary: str, details: dict[str, Any]) -> Alert:
        return Alert(
            suite_id=self.run.suite_id,
            team_id=self.run.team_id,
            rule=decision.key,
            status="firing",
            summary=summary,
            details=details,
            fired_run_id=self.run.id,
            last_run_id=self.run.id,
            started_at=self.now,
            updated_at=self.now,
        )

    def _suite_settings(self) -> dict[str, Any]:
        suite = suite_repo.suite_by_id(self.session, self.run.suite_id, None)
        return suite.settings if suite is not None else {}

    def _message(
        self,
        alert: Alert,
        kind: str,
        summary: str,
        decision: AlertDecision,
        figures: tuple[float | None, ...],
        threshold: float,
    ) -> AlertMessage:
        link = self.notify.public_url
        return AlertMessage(
            alert_id=alert.id,
            event={"fired": "fire", "renotified": "renotify"}.get(kind, "resolve"),
            suite=self.score.info.suite,
            team=suite_repo.team_name(self.session, self.run.team_id),
            model=self.run.model,
            rule=decision.key,
            summary=summary,
            reasons=decision.reasons,
            run_id=self.run.id,
            agreement=figures[0],
            lower=figures[1],
            upper=figures[2],
            threshold=threshold,
            worst=worst_lines(self.score, decision.key),
            started_at=alert.started_at,
            ended_at=self.now if kind == "resolved" else None,
            at=self.now,
            link=f"{link.rstrip('/')}/api/evals/runs/{self.run.id}/report" if link else None,
        )
