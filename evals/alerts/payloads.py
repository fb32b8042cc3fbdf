"""Channel payloads of an alert event: generic JSON webhook, Slack, Alertmanager API v2."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from evals.alerts.messages import AlertMessage

ALERT_NAMES = {
    "suite": "PlumblineAgreementLow",
    "regression": "PlumblineAgreementRegression",
}


def build_payload(kind: str, message: AlertMessage, *, hold_s: float) -> Any:
    """The JSON body a channel of `kind` receives for this event."""
    if kind == "slack":
        return slack_payload(message)
    if kind == "alertmanager":
        return alertmanager_payload(message, hold_s=hold_s)
    return webhook_payload(message)


def webhook_payload(message: AlertMessage) -> dict[str, Any]:
    """Everything about the event, machine-readable."""
    return {"version": "1", "source": "plumbline", **message.to_json()}


def _percent(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def slack_payload(message: AlertMessage) -> dict[str, Any]:
    """An incoming-webhook message: a headline, the figures, the worst questions and why."""
    icon, state = (
        (":rotating_light:", "FIRING") if message.firing else (":white_check_mark:", "RESOLVED")
    )
    if message.event == "renotify":
        state = "STILL FIRING"
    signed = message.rule == "regression"
    figures = (
        f"*Agreement* {_percent(message.agreement, signed)} "
        f"(95% CI {_percent(message.lower, signed)} to {_percent(message.upper, signed)}), "
        f"threshold {message.threshold:.0%}"
    )
    head = (
        f"*Suite* `{message.suite}` (team {message.team}, model `{message.model}`)\n"
        f"*Rule* `{message.rule}`   *Run* {message.run_id}\n{figures}"
    )
    lines = [
        f"\u2022 `{q.question}`{' (critical)' if q.critical else ''}: {q.agreement:.0%} agree, "
        f"modal answer {q.modal_answer!r}" + (f"\n    {q.explanation}" if q.explanation else "")
        for q in message.worst
    ]
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": f"{state}: {message.summary}"[:150]},
        },
        {"type": "section", "text": {"type": "mrkdwn", "text": head}},
    ]
    if lines and message.firing:
        worst = "*Worst questions*\n" + "\n".join(lines)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": worst[:2900]}})
    context = "; ".join(message.reasons) + (f"  <{message.link}|details>" if message.link else "")
    if message.trace_id:
        # First, so a long list of reasons cut to Slack's limit never cuts the trace id.
        context = f"trace `{message.trace_id}`  {context}"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context[:2900]}]})
    return {"text": f"{icon} {state}: {message.summary}", "blocks": blocks}


def alertmanager_payload(message: AlertMessage, *, hold_s: float) -> list[dict[str, Any]]:
    """POST /api/v2/alerts body: stable labels, annotations, startsAt and endsAt.

    A firing alert is sent once, so its endsAt is set `hold_s` ahead (Alertmanager would
    otherwise resolve it after its resolve_timeout); a resolve sets endsAt to the resolve time.
    """
    name = ALERT_NAMES.get(message.rule, "PlumblineCriticalQuestionAgreementLow")
    ends = message.ended_at if message.ended_at else message.at + timedelta(seconds=hold_s)
    worst = "; ".join(
        f"{q.question} {q.agreement:.0%}" + (f" ({q.explanation})" if q.explanation else "")
        for q in message.worst
    )
    alert: dict[str, Any] = {
        "labels": {
            "alertname": name,
            "suite": message.suite,
            "team": message.team,
            "model": message.model,
            "rule": message.rule,
            "severity": "page" if message.rule != "regression" else "warning",
            "source": "plumbline",
        },
        "annotations": {
            "summary": message.summary,
            "description": "; ".join(message.reasons),
            "worst_questions": worst,
            "run_id": str(message.run_id),
        },
        "startsAt": message.started_at.isoformat(),
        "endsAt": ends.isoformat(),
    }
    if message.trace_id:
        alert["annotations"]["trace_id"] = message.trace_id
    if message.link:
        alert["generatorURL"] = message.link
    return [alert]
