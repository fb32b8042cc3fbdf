"""Channel payloads: a readable Slack message, Alertmanager v2 alerts, the generic JSON."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from evals.alerts.messages import AlertMessage, QuestionLine
from evals.alerts.payloads import alertmanager_payload, build_payload, slack_payload

START = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
FIRE = AlertMessage(
    alert_id=7,
    event="fire",
    suite="contracts",
    team="legal",
    model="llama-8b",
    rule="question:cap",
    summary="contracts: critical question cap 46.0% (95% CI 36.6%-55.7%), firing",
    reasons=("upper 0.557 < threshold 0.900", "2 consecutive breaching run(s)"),
    run_id=42,
    agreement=0.46,
    lower=0.366,
    upper=0.557,
    threshold=0.9,
    worst=(
        QuestionLine(
            "cap",
            0.46,
            0.366,
            0.557,
            "12 month",
            True,
            'first divergence after "The indemnity cap is": " 12" p=0.46 vs " 24" p=0.41 '
            "(near tie)",
        ),
        QuestionLine("law", 0.99, 0.95, 1.0, "england", False, None),
    ),
    started_at=START,
    ended_at=None,
    at=START,
    link="https://plumbline.example/api/evals/runs/42/report",
)


def test_slack_says_what_fires_with_the_worst_questions_and_why() -> None:
    message = slack_payload(FIRE)
    assert message["text"].startswith(":rotating_light: FIRING: contracts: critical question cap")
    header, figures, worst, context = message["blocks"]
    assert header["type"] == "header" and header["text"]["type"] == "plain_text"
    assert "*Suite* `contracts` (team legal, model `llama-8b`)" in figures["text"]["text"]
    assert "*Agreement* 46.0% (95% CI 36.6% to 55.7%), threshold 90%" in figures["text"]["text"]
    lines = worst["text"]["text"].splitlines()
    assert lines[0] == "*Worst questions*"
    assert lines[1] == "\u2022 `cap` (critical): 46% agree, modal answer '12 month'"
    assert lines[2].strip().startswith('first divergence after "The indemnity cap is"')
    assert (
        "<https://plumbline.example/api/evals/runs/42/report|details>"
        in (context["elements"][0]["text"])
    )


def test_slack_resolve_is_short() -> None:
    resolved = replace(FIRE, event="resolve", ended_at=START + timedelta(hours=2))
    message = slack_payload(resolved)
    assert message["text"].startswith(":white_check_mark: RESOLVED")
    assert [b["type"] for b in message["blocks"]] == ["header", "section", "context"]


def test_alertmanager_firing_holds_and_resolving_ends_with_the_same_labels() -> None:
    (firing,) = alertmanager_payload(FIRE, hold_s=3600)
    later = START + timedelta(hours=5)
    (again,) = alertmanager_payload(replace(FIRE, event="renotify", at=later), hold_s=3600)
    (resolved,) = alertmanager_payload(
        replace(FIRE, event="resolve", ended_at=later, at=later), hold_s=3600
    )
    assert firing["labels"] == {
        "alertname": "PlumblineCriticalQuestionAgreementLow",
        "suite": "contracts",
        "team": "legal",
        "model": "llama-8b",
        "rule": "question:cap",
        "severity": "page",
        "source": "plumbline",
    }
    assert firing["labels"] == again["labels"] == resolved["labels"]
    assert firing["startsAt"] == again["startsAt"] == resolved["startsAt"] == START.isoformat()
    assert firing["endsAt"] == (START + timedelta(hours=1)).isoformat()
    assert again["endsAt"] == (later + timedelta(hours=1)).isoformat()
    assert resolved["endsAt"] == later.isoformat()
    assert firing["generatorURL"] == FIRE.link
    assert firing["annotations"]["worst_questions"].startswith("cap 46% (first divergence")
    assert all(isinstance(v, str) for v in firing["annotations"].values())


def test_the_generic_webhook_carries_every_field_as_json() -> None:
    body = build_payload("webhook", FIRE, hold_s=60)
    assert body["version"] == "1" and body["source"] == "plumbline"
    assert body["alert_id"] == 7 and body["event"] == "fire" and body["run_id"] == 42
    assert body["started_at"] == START.isoformat() and body["ended_at"] is None
    assert body["worst"][0]["question"] == "cap" and body["worst"][0]["critical"] is True
    assert build_payload("alertmanager", FIRE, hold_s=60)[0]["labels"]["rule"] == "question:cap"


def test_every_channel_names_the_trace_of_the_run_that_fired() -> None:
    traced = replace(FIRE, trace_id="4bf92f3577b34da6a3ce929d0e0e4736", reasons=("x" * 5000,))
    assert build_payload("webhook", traced, hold_s=60)["trace_id"] == traced.trace_id
    (alert,) = alertmanager_payload(traced, hold_s=60)
    assert alert["annotations"]["trace_id"] == traced.trace_id
    # Before the reasons, so Slack's cut of a long context never cuts the trace id.
    context = slack_payload(traced)["blocks"][-1]["elements"][0]["text"]
    assert context.startswith(f"trace `{traced.trace_id}`")


def test_without_a_trace_no_channel_shows_one() -> None:
    assert build_payload("webhook", FIRE, hold_s=60)["trace_id"] is None
    assert "trace_id" not in alertmanager_payload(FIRE, hold_s=60)[0]["annotations"]
    assert "trace" not in slack_payload(FIRE)["blocks"][-1]["elements"][0]["text"]
