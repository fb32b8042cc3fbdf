"""Create a run: freeze the suite and its approved paraphrases, insert every sample slot pending."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evals.errors import NotFoundError
from evals.paraphrases import repository as paraphrase_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.suite import sample_seed
from evals.suites import repository as suite_repo
from evals.suites.importer import suite_definition
from plumbline.models import EvalRun
from plumbline.otlp.trace_context import new_span_id, new_trace_id

TRIGGERS = ("cli", "api", "schedule")


@dataclass(frozen=True, slots=True)
class CreatedRun:
    """The run and, per question short of approved paraphrases, how many it has."""

    run_id: int
    created: bool
    n_samples: int
    short_of_paraphrases: dict[str, int]


def create_run(
    session: Session,
    suite_id: int,
    *,
    team_id: int | None,
    trigger: str = "cli",
    scheduled_for: datetime | None = None,
) -> CreatedRun:
    """A new pending run with all its sample rows, or the run that already holds this slot.

    Wordings are frozen here: paraphrase 0 is always the canonical question (the production
    wording, comparable across every run), then the approved paraphrases in approval order, up
    to `paraphrases_per_question` wordings in all. Approving more paraphrases later only ever
    appends wordings; nothing pending, rejected or stale is ever sent.
    """
    suite_row = suite_repo.suite_by_id(session, suite_id, team_id)
    if suite_row is None:
        raise NotFoundError(f"No suite with id {suite_id} is visible to this key.", "suite")
    if scheduled_for is not None:
        taken = run_repo.run_for_slot(session, suite_row.id, scheduled_for)
        if taken is not None:
            return CreatedRun(taken.id, False, taken.n_samples, {})
    questions = suite_repo.questions_of(session, suite_row.id)
    suite = suite_definition(suite_row.settings, questions)
    approved = paraphrase_repo.approved_sets(session, [q.id for q in questions])
    wordings: dict[str, list[dict[str, Any]]] = {}
    short: dict[str, int] = {}
    for row, question in zip(questions, suite.questions, strict=True):
        chosen = approved.get(row.id, [])[: suite.paraphrases_per_question - 1]
        if len(chosen) < suite.paraphrases_per_question - 1:
            short[question.id] = len(chosen)
        wordings[question.id] = [{"paraphrase_id": None, "text": question.text}] + [
            {"paraphrase_id": p.id, "text": p.text} for p in chosen
        ]
    definition = {
        "suite": suite.model_dump(mode="json", exclude_unset=True),
        "question_ids": {q.key: q.id for q in questions},
        "wordings": wordings,
    }
    n_samples = sum(len(w) for w in wordings.values()) * suite.samples_per_paraphrase
    run = EvalRun(
        suite_id=suite_row.id,
        team_id=suite_row.team_id,
        status="pending",
        trigger=trigger,
        scheduled_for=scheduled_for,
        suite_revision=suite_row.revision,
        definition=definition,
        model=suite.model,
        n_samples=n_samples,
        # Every run is a trace of its own; whether it is exported is the finalising worker's
        # sampler's decision, made from this id.
        trace_id=new_trace_id(),
        span_id=new_span_id(),
    )
    try:
        with session.begin_nested():
            run_repo.add_run(session, run)
    except IntegrityError:
        if scheduled_for is None:
            raise
        # Another scheduler took the slot between our check and our insert.
        taken = run_repo.run_for_slot(session, suite_row.id, scheduled_for)
        assert taken is not None
        return CreatedRun(taken.id, False, taken.n_samples, {})
    sample_repo.insert_samples(session, _slots(run, suite, definition))
    return CreatedRun(run.id, True, n_samples, short)


def _slots(run: EvalRun, suite: Any, definition: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for question in suite.questions:
        question_id = definition["question_ids"][question.id]
        for index, wording in enumerate(definition["wordings"][question.id]):
            for sample in range(suite.samples_per_paraphrase):
                rows.append(
                    {
                        "run_id": run.id,
                        "team_id": run.team_id,
                        "question_id": question_id,
                        "paraphrase_index": index,
                        "paraphrase_id": wording["paraphrase_id"],
                        "sample_index": sample,
                        "seed": sample_seed(suite.sampling, question.id, index, sample),
                        "status": "pending",
                        "attempts": 0,
                    }
                )
    return rows
