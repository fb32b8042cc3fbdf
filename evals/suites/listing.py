"""Suites as the CLI and the API list and show them, with their paraphrase review state."""

from __future__ import annotations

from sqlalchemy.orm import Session

from evals.errors import NotFoundError
from evals.paraphrases import repository as paraphrase_repo
from evals.suites import repository as suite_repo
from evals.suites.views import QuestionView, SuiteView


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
        QuestionView(
            id=q.id,
            key=q.key,
            text=q.text,
            answer_type=q.spec.get("answer", {}).get("type"),
            paraphrases={status: n for (key, status), n in counts.items() if key == q.key},
        )
        for q in suite_repo.questions_of(session, suite.id)
    ]
    return SuiteView(
        id=suite.id,
        name=suite.name,
        team=suite_repo.team_name(session, suite.team_id),
        model=suite.model,
        revision=suite.revision,
        settings=suite.settings,
        questions=questions,
        paraphrases=totals,
    )
