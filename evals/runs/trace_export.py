"""Export a finalised run's trace: its facts read back from the database, its spans sent once."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.repository import alerts as alert_repo
from evals.run_trace import QuestionFacts, RunFacts, RunTracing, run_spans
from evals.run_trace.spans import AlertFacts
from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.suites import repository as suite_repo
from plumbline.models import EvalQuestionResult

log = logging.getLogger(__name__)


def export_run_trace(
    sessions: sessionmaker[Session], run_id: int, tracing: RunTracing | None
) -> bool | None:
    """Send the run's spans if tracing is on and its trace is sampled; None when not sent.

    Called after the run's finalisation committed; bounded by the poster's tries and timeout,
    and never raises, so a dead or hung collector costs the run at most that bound.
    """
    if tracing is None:
        return None
    try:
        with sessions() as session:
            facts = run_facts(session, run_id)
        if facts is None or not tracing.sampled(facts.trace_id):
            return None
        spans = run_spans(facts)
    except Exception:
        log.exception("run %s: its trace could not be built", run_id)
        return False
    sent = tracing.export(spans)
    if sent:
        log.info("run %s: trace %s exported (%d spans)", run_id, facts.trace_id, len(spans))
    return sent


def run_facts(session: Session, run_id: int) -> RunFacts | None:
    """The finished run as its spans show it; None for a run without a trace id."""
    run = run_repo.run_by_id(session, run_id, None)
    if run is None or run.trace_id is None or run.span_id is None:
        return None
    summary: dict[str, Any] = run.summary or {}
    evaluation = alert_repo.evaluation_of_run(session, run_id)
    decisions = evaluation.decisions if evaluation is not None else []
    finished = run.finished_at or datetime.now(UTC)
    return RunFacts(
        run_id=run.id,
        trace_id=run.trace_id,
        span_id=run.span_id,
        suite=str(run.definition["suite"]["name"]),
        team=suite_repo.team_name(session, run.team_id),
        model=run.model,
        status=run.status,
        started_at=run.started_at or run.created_at or finished,
        finished_at=finished,
        samples=sample_repo.status_counts(session, run_id),
        agreement=summary.get("agreement"),
        lower=summary.get("agreement_lower"),
        upper=summary.get("agreement_upper"),
        threshold=summary.get("threshold"),
        alert_outcome=evaluation.outcome if evaluation is not None else None,
        alerts=tuple(
            AlertFacts(str(d["key"]), str(d["action"]), str(d["status"])) for d in decisions
        ),
        questions=tuple(_question(r) for r in result_repo.results_of_run(session, run_id)),
    )


def _question(row: EvalQuestionResult) -> QuestionFacts:
    branches = (row.divergence or {}).get("branches") or []
    return QuestionFacts(
        key=row.question_key,
        agreement=row.agreement,
        lower=row.agreement_lower,
        upper=row.agreement_upper,
        n_samples=row.n_samples,
        critical=row.critical,
        divergence_position=row.divergence_position,
        divergence_margin=row.divergence_margin,
        divergence_verdict=row.divergence_verdict,
        divergence_near_tie=(row.divergence or {}).get("near_tie"),
        divergence_tokens=tuple(str(b.get("token")) for b in branches),
        divergence_probabilities=tuple(b.get("probability") for b in branches),
    )
