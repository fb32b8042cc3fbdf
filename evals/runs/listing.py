"""Runs as the CLI and the API list and show them."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from evals.errors import NotFoundError
from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.runs.views import RunDetail, RunView
from plumbline.models import EvalRun

RESULT_FIELDS = (
    "question_key",
    "n_samples",
    "n_paraphrases",
    "n_answers",
    "modal_answer",
    "modal_count",
    "agreement",
    "agreement_lower",
    "agreement_upper",
    "pairwise_agreement",
    "entropy",
    "parse_failures",
    "expected_answer",
    "accuracy",
    "paraphrases_breaking",
    "worst_paraphrase",
    "critical",
    "max_prompt_fraction",
    "context_flag",
    "output_truncated",
    "context_truncated",
    "divergence_verdict",
    "divergence_explanation",
    "repeatability",
    "flags",
    "divergence",
)


def _view(session: Session, run: EvalRun, suite: str) -> RunView:
    return RunView(
        id=run.id,
        suite_id=run.suite_id,
        suite=suite,
        status=run.status,
        trigger=run.trigger,
        model=run.model,
        n_samples=run.n_samples,
        samples=sample_repo.status_counts(session, run.id),
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        scheduled_for=run.scheduled_for,
        baseline_run_id=run.baseline_run_id,
        summary=run.summary,
        error=run.error,
        trace_id=run.trace_id,
    )


def run_view(session: Session, run_id: int, *, team_id: int | None) -> RunView:
    """One run, if visible to the team (None: any)."""
    run = run_repo.run_by_id(session, run_id, team_id)
    if run is None:
        raise NotFoundError(f"No run {run_id} is visible to this key.", "run")
    return _view(session, run, str(run.definition["suite"]["name"]))


def run_views(
    session: Session, *, team_id: int | None, suite_id: int | None = None, limit: int = 50
) -> list[RunView]:
    """Newest runs first."""
    return [
        _view(session, r, name) for r, name in run_repo.list_runs(session, team_id, suite_id, limit)
    ]


def run_detail(session: Session, run_id: int, *, team_id: int | None) -> RunDetail:
    """One run with its per-question results, if visible to the team (None: any)."""
    view = run_view(session, run_id, team_id=team_id)
    return RunDetail(**view.model_dump(), questions=question_results(session, run_id))


def question_results(session: Session, run_id: int) -> list[dict[str, Any]]:
    """A scored run's per-question results (with the divergence report) as plain records."""
    return [
        {name: getattr(row, name) for name in RESULT_FIELDS}
        for row in result_repo.results_of_run(session, run_id)
    ]
