"""AlertMessage: what every notification says about one alert event, from a scored run."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from evals.alerting import REGRESSION_KEY, SUITE_KEY, AlertDecision, RunObservation
from evals.runs.result_rows import plain
from evals.scoring import RunScore

EVENTS = {"fired": "fire", "renotified": "renotify", "resolved": "resolve"}


@dataclass(frozen=True, slots=True)
class QuestionLine:
    """One of the worst questions of the run, with its divergent-token explanation."""

    question: str
    agreement: float
    lower: float
    upper: float
    modal_answer: str | None
    critical: bool
    explanation: str | None


@dataclass(frozen=True, slots=True)
class AlertMessage:
    """An alert event as channels render it."""

    alert_id: int
    event: str
    suite: str
    team: str
    model: str
    rule: str
    summary: str
    reasons: tuple[str, ...]
    run_id: int
    agreement: float | None
    lower: float | None
    upper: float | None
    threshold: float
    worst: tuple[QuestionLine, ...]
    started_at: datetime
    ended_at: datetime | None
    at: datetime
    link: str | None = None
    # The trace of the run that fired the alert, to open in the tracing backend.
    trace_id: str | None = None

    @property
    def firing(self) -> bool:
        """True unless this event resolves the alert."""
        return self.event != "resolve"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form."""
        data = asdict(self)
        data["started_at"] = self.started_at.isoformat()
        data["ended_at"] = self.ended_at.isoformat() if self.ended_at else None
        data["at"] = self.at.isoformat()
        return data


def rule_figures(
    rule: str, observation: RunObservation, score: RunScore
) -> tuple[float | None, float | None, float | None]:
    """The point estimate and interval the rule looked at."""
    if rule == SUITE_KEY:
        estimate = observation.agreement
        return (estimate.point, estimate.lower, estimate.upper) if estimate else (None,) * 3
    if rule == REGRESSION_KEY:
        evidence = observation.regression
        return (evidence.delta, evidence.lower, evidence.upper) if evidence else (None,) * 3
    found = observation.questions.get(rule.split(":", 1)[-1])
    return (found.point, found.lower, found.upper) if found else (None,) * 3


def summary_line(suite: str, decision: AlertDecision, figures: tuple[float | None, ...]) -> str:
    """One readable sentence for titles and Alertmanager summaries."""
    point, lower, upper = figures
    verb = "resolved" if decision.action.value == "resolve" else "firing"
    if point is None or lower is None or upper is None:
        return f"{suite}: {decision.key} {verb} ({decision.reasons[0]})"
    if decision.key == REGRESSION_KEY:
        return (
            f"{suite}: agreement change {point:+.1%} (95% CI {lower:+.1%} to {upper:+.1%}) "
            f"vs the baseline run, {verb}"
        )
    what = "agreement" if decision.key == SUITE_KEY else f"critical question {decision.key[9:]}"
    return f"{suite}: {what} {point:.1%} (95% CI {lower:.1%}-{upper:.1%}), {verb}"


def worst_lines(score: RunScore, rule: str, n: int = 5) -> tuple[QuestionLine, ...]:
    """The rule's own question first (for a question rule), then the worst of the run."""
    table = score.worst_questions(len(score.questions))
    if rule.startswith("question:"):
        key = rule.split(":", 1)[1]
        table = table.assign(_own=table["question_id"] != key).sort_values("_own", kind="stable")
    lines = []
    for record in table.head(n).to_dict("records"):
        lines.append(
            QuestionLine(
                question=str(record["question_id"]),
                agreement=float(record["agreement"]),
                lower=float(record["agreement_lower"]),
                upper=float(record["agreement_upper"]),
                modal_answer=plain(record.get("modal_answer")),
                critical=bool(record.get("critical")),
                explanation=plain(record.get("divergence_explanation")),
            )
        )
    return tuple(lines)
