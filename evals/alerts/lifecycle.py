"""One run's alert decisions applied to the alerts' lifecycle: rows, events, notifications."""

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
    RunObservation,
)
from evals.alerts.channels import channel_targets, suite_policy
from evals.alerts.messages import AlertMessage, rule_figures, summary_line, worst_lines
from evals.alerts.notify import add_notifications
from evals.alerts.repository import alerts as alert_repo
from evals.scoring import RunScore
from evals.suites import repository as suite_repo
from plumbline.models import Alert, AlertEvent, EvalRun
from plumbline.settings import NotifySettings


def rule_threshold(policy: AlertPolicy, key: str) -> float:
    """The level a rule compares with (the regression rule: the smallest drop)."""
    if key == SUITE_KEY:
        return policy.suite.threshold
    if key == REGRESSION_KEY:
        return -policy.regression.min_drop
    return policy.critical.threshold


@dataclass(slots=True)
class AlertLifecycle:
    """Moves each alert of a suite along firing -> resolved for one run's decisions."""

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
            trace_id=self.run.trace_id,
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
            trace_id=alert.trace_id,
        )
