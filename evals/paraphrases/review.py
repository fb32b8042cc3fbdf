"""Review paraphrases: list the queue, approve or reject by id (team-scoped)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy.orm import Session

from evals.errors import ConflictError, EvalServiceError, NotFoundError
from evals.paraphrases import repository as paraphrase_repo
from evals.paraphrases.views import ParaphraseView
from evals.suites import repository as suite_repo
from plumbline.models import EvalParaphrase

STATUSES = ("pending", "approved", "rejected", "stale")
Decision = Literal["approved", "rejected"]


def view(paraphrase: EvalParaphrase, question_key: str) -> ParaphraseView:
    """The listed form of a paraphrase row."""
    return ParaphraseView(
        id=paraphrase.id,
        question_key=question_key,
        text=paraphrase.text,
        status=paraphrase.status,
        source=paraphrase.source,
        generator_model=paraphrase.generator_model,
        generator_call_id=paraphrase.generator_call_id,
    )


def list_paraphrases(
    session: Session, suite_id: int, *, team_id: int | None, status: str | None = None
) -> list[ParaphraseView]:
    """A suite's paraphrases, optionally of one status, in question order."""
    if status is not None and status not in STATUSES:
        raise EvalServiceError(
            f"Unknown status {status!r}; use one of: {', '.join(STATUSES)}.", "status"
        )
    if suite_repo.suite_by_id(session, suite_id, team_id) is None:
        raise NotFoundError(f"No suite with id {suite_id} is visible to this key.", "suite")
    rows = paraphrase_repo.paraphrases_of_suite(session, suite_id, status=status)
    return [view(p, key) for p, key in rows]


def review_paraphrases(
    session: Session, ids: Collection[int], decision: Decision, *, team_id: int | None
) -> list[int]:
    """Approve or reject paraphrases; all ids must be visible, stale ones cannot be approved."""
    wanted = sorted(set(ids))
    if not wanted:
        raise EvalServiceError("Give at least one paraphrase id.", "ids")
    found = {p.id: p for p in paraphrase_repo.paraphrases_by_ids(session, wanted, team_id)}
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFoundError(
            f"No paraphrase {', '.join(map(str, missing))} is visible to this key "
            "(see `plumbline eval paraphrases list SUITE`).",
            "ids",
        )
    stale = [i for i in wanted if found[i].status == "stale"]
    if decision == "approved" and stale:
        raise ConflictError(
            f"Paraphrase {', '.join(map(str, stale))} is stale: its question changed since it "
            "was written. Generate new ones with `plumbline eval paraphrases generate`.",
            "ids",
        )
    paraphrase_repo.set_status(session, wanted, decision, datetime.now(UTC))
    return wanted
