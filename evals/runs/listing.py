"""Read-side views of runs and suites for the CLI and the API."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from evals.errors import NotFoundError
from evals.paraphrases import repository as paraphrase_repo
from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.suites import repository as suite_repo
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


@dataclass(frozen=True, slots=True)
class RunView:
    """A run as listed: status, sample counts and its scored summary once there is one."""

    id: int
    suite_id: int
    suite: str
    status: str
    trigger: str
    model: str
    n_samples: int
    samples: dict[str, int]
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    scheduled_for: datetime | None
    baseline_run_id: int | None
    summary: dict[str, Any] | None
    error: str | None


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


def question_results(session: Session, run_id: int) -> list[dict[str, Any]]:
    """A scored run's per-question results (with the divergence report) as plain records."""
    return [
        {name: getattr(row, name) for name in RESULT_FIELDS}
        for row in result_repo.results_of_run(session, run_id)
    ]


@dataclass(frozen=True, slots=True)
class SuiteView:
    """A suite as listed, with its paraphrase review state per status."""

    id: int
    name: str
    team: str
    model: str
    revision: int
    questions: list[dict[str, Any]]
    settings: dict[str, Any]
    paraphrases: dict[str, int]


def suite_views(session: Session, *, team_id: int | None) -> list[SuiteView]:
    """Every visible suite."""
    rows = suite_repo.list_suites(session, team_id)
    return [suite_view(session, suite.id, team_id=team_id) for suite, _ in rows]


def suite_view(session: Session, suite_id: int, *, team_id: int | None) -> SuiteView:
    """One suite with its questions and how many paraphrases each has per status."""
    suite = suite_repo.suite_by_id(session, suite_id, team_id)
    if suite is None:
        raise NotFoundError(f"No suite with id {suite_id} is visible to this key.", "suite")
    counts = paraphrase_repo.status_counts(session, suite.id)
    totals: dict[str, int] = {}
    for (_, status), n in counts.items():
        totals[status] = totals.get(status, 0) + n
    questions = [
        {
            "id": q.id,
            "key": q.key,
            "text": q.text,
            "answer_type": q.spec.get("answer", {}).get("type"),
            "paraphrases": {status: n for (key, status), n in counts.items() if key == q.key},
        }
        for q in suite_repo.questions_of(session, suite.id)
    ]
    return SuiteView(
        id=suite.id,
        name=suite.name,
        team=suite_repo.team_name(session, suite.team_id),
        model=suite.model,
        revision=suite.revision,
        questions=questions,
        settings=suite.settings,
        paraphrases=totals,
    )
