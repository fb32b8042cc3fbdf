"""The spans of one finished run: the run span (the trace's root) and one child per question.

Built when the run is finalised, with every figure known. A sample's gateway call is a trace of
its own that links to its question's span (see `evals.run_trace.ids`), so a run of Q questions
is 1 + Q spans however many samples it sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from evals.run_trace.ids import question_span_id
from plumbline.otlp.attributes import key_values

# Phoenix nests dotted keys: no attribute key here is a prefix of another's path.
FAILED_STATUSES = frozenset({"failed"})


@dataclass(frozen=True, slots=True)
class QuestionFacts:
    """One scored question of the run, as its span shows it."""

    key: str
    agreement: float
    lower: float
    upper: float
    n_samples: int
    critical: bool = False
    divergence_position: int | None = None
    divergence_margin: float | None = None
    divergence_verdict: str | None = None
    divergence_near_tie: bool | None = None
    # The first divergent position's competing tokens and their probabilities, as stored.
    divergence_tokens: tuple[str, ...] = ()
    divergence_probabilities: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class AlertFacts:
    """One alert rule's decision on the run."""

    rule: str
    action: str
    status: str


@dataclass(frozen=True, slots=True)
class RunFacts:
    """A finished run, as its spans show it."""

    run_id: int
    trace_id: str
    span_id: str
    suite: str
    team: str
    model: str
    status: str
    started_at: datetime
    finished_at: datetime
    samples: dict[str, int]
    agreement: float | None = None
    lower: float | None = None
    upper: float | None = None
    threshold: float | None = None
    alert_outcome: str | None = None
    alerts: tuple[AlertFacts, ...] = ()
    questions: tuple[QuestionFacts, ...] = ()

    @property
    def errors(self) -> int:
        """Samples that ended without an answer (failed or rejected)."""
        return self.samples.get("failed", 0) + self.samples.get("rejected", 0)

    @property
    def alert_decision(self) -> str:
        """What the run did to alerts: `fire`, `resolve`, `renotify`, `none` or why not decided."""
        acted = {a.action for a in self.alerts if a.action != "nothing"}
        for action in ("fire", "renotify", "resolve"):
            if action in acted:
                return action
        if self.alert_outcome not in (None, "evaluated"):
            return str(self.alert_outcome)
        return "none"


def _nanos(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)


def run_span(run: RunFacts) -> Span:
    """The run's span: the root of its trace."""
    attributes: dict[str, Any] = {
        "plumbline.eval.run.id": run.run_id,
        "plumbline.eval.run.status": run.status,
        "plumbline.eval.suite": run.suite,
        "plumbline.eval.model": run.model,
        "plumbline.team": run.team,
        "plumbline.eval.agreement": run.agreement,
        "plumbline.eval.interval.lower": run.lower,
        "plumbline.eval.interval.upper": run.upper,
        "plumbline.eval.threshold": run.threshold,
        "plumbline.eval.alert.decision": run.alert_decision,
        "plumbline.eval.alert.rules": [f"{a.rule}:{a.action}" for a in run.alerts] or None,
        "plumbline.eval.samples": sum(run.samples.values()),
        "plumbline.eval.errors": run.errors,
        "plumbline.eval.questions": len(run.questions),
    }
    end = max(_nanos(run.finished_at), _nanos(run.started_at))
    events = [
        Span.Event(
            name="plumbline.eval.alert",
            time_unix_nano=end,
            attributes=key_values(
                {
                    "plumbline.eval.alert.rule": a.rule,
                    "plumbline.eval.alert.action": a.action,
                    "plumbline.eval.alert.status": a.status,
                }
            ),
        )
        for a in run.alerts
        if a.action != "nothing"
    ]
    status = Status()
    if run.status in FAILED_STATUSES:
        status = Status(code=Status.STATUS_CODE_ERROR, message=f"run {run.run_id} {run.status}")
    return Span(
        trace_id=bytes.fromhex(run.trace_id),
        span_id=bytes.fromhex(run.span_id),
        name=f"eval.run {run.suite}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=_nanos(run.started_at),
        end_time_unix_nano=end,
        attributes=key_values(attributes),
        events=events,
        status=status,
    )


def question_span(run: RunFacts, question: QuestionFacts) -> Span:
    """A question's span, a child of the run's; its samples' calls link to it."""
    probabilities = question.divergence_probabilities
    attributes: dict[str, Any] = {
        "plumbline.eval.run.id": run.run_id,
        "plumbline.eval.question.key": question.key,
        "plumbline.eval.question.critical": question.critical,
        "plumbline.eval.agreement": question.agreement,
        "plumbline.eval.interval.lower": question.lower,
        "plumbline.eval.interval.upper": question.upper,
        "plumbline.eval.samples": question.n_samples,
        "plumbline.eval.divergence.position": question.divergence_position,
        "plumbline.eval.divergence.margin": question.divergence_margin,
        "plumbline.eval.divergence.verdict": question.divergence_verdict,
        "plumbline.eval.divergence.near_tie": question.divergence_near_tie,
        "plumbline.eval.divergence.tokens": list(question.divergence_tokens) or None,
        # An OTLP array holds one type: left out when some probability is unknown.
        "plumbline.eval.divergence.probabilities": (
            [float(p) for p in probabilities if p is not None]
            if probabilities and None not in probabilities
            else None
        ),
    }
    return Span(
        trace_id=bytes.fromhex(run.trace_id),
        span_id=bytes.fromhex(question_span_id(run.trace_id, question.key)),
        parent_span_id=bytes.fromhex(run.span_id),
        name=f"eval.question {question.key}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=_nanos(run.started_at),
        end_time_unix_nano=max(_nanos(run.finished_at), _nanos(run.started_at)),
        attributes=key_values(attributes),
    )


def run_spans(run: RunFacts) -> list[Span]:
    """The run's span, then one span per question."""
    return [run_span(run), *(question_span(run, q) for q in run.questions)]
