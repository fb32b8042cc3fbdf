"""Paraphrase review and run creation on Postgres and SQLite: what a run freezes, and slots."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from evals.errors import ConflictError, NotFoundError
from evals.paraphrases.review import list_paraphrases, review_paraphrases
from evals.runs.creation import create_run
from evals.runs.repository import samples as sample_repo
from evals.suites import repository as suite_repo
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.models import EvalRun
from tests.evals_integration.test_suite_import import add_generated, keys_and_ids

SUITE = """\
name: {name}
team: {team}
model: tiny
paraphrases_per_question: 3
samples_per_paraphrase: 2
sampling: {{seed_policy: per_sample, seed: 3}}
questions:
  - id: cap
    text: What is the indemnity cap?
    answer: {{type: number, unit: months}}
"""


def suite_with_paraphrases(
    sessions: sessionmaker[Session], name: str, team: str = "legal"
) -> tuple[int, int, list[int]]:
    """A suite with four generated, pending paraphrases of its one question."""
    done = in_transaction(sessions, import_suite, parse_suite(SUITE.format(name=name, team=team)))
    cap = keys_and_ids(sessions, done.suite_id)["cap"]
    ids = [
        add_generated(sessions, cap, text, "pending")
        for text in ("How big is the cap?", "What cap applies?", "Cap size?", "Which cap?")
    ]
    return done.suite_id, cap, ids


def run_wordings(sessions: sessionmaker[Session], run_id: int) -> list[str]:
    with sessions() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        return [w["text"] for w in run.definition["wordings"]["cap"]]


def test_review_moves_paraphrases_between_statuses(
    sessions: sessionmaker[Session], name: str
) -> None:
    suite_id, _, ids = suite_with_paraphrases(sessions, name)
    in_transaction(sessions, review_paraphrases, ids[:2], "approved", team_id=None)
    in_transaction(sessions, review_paraphrases, ids[2:3], "rejected", team_id=None)
    listed = in_transaction(sessions, list_paraphrases, suite_id, team_id=None)
    assert [(p.id, p.status) for p in listed] == [
        (ids[0], "approved"),
        (ids[1], "approved"),
        (ids[2], "rejected"),
        (ids[3], "pending"),
    ]
    pending = in_transaction(sessions, list_paraphrases, suite_id, team_id=None, status="pending")
    assert [p.id for p in pending] == [ids[3]]


def test_review_refuses_unknown_foreign_and_stale_paraphrases(
    sessions: sessionmaker[Session], name: str
) -> None:
    _, cap, ids = suite_with_paraphrases(sessions, name)
    with pytest.raises(NotFoundError, match=r"No paraphrase 999999"):
        in_transaction(sessions, review_paraphrases, [ids[0], 999999], "approved", team_id=None)
    sales_suite, _, _ = suite_with_paraphrases(sessions, f"{name}-sales", team="sales")
    with sessions() as session:
        sales = suite_repo.suite_by_id(session, sales_suite, None)
        assert sales is not None
    with pytest.raises(NotFoundError):
        in_transaction(sessions, review_paraphrases, [ids[0]], "approved", team_id=sales.team_id)
    stale = add_generated(sessions, cap, "An outdated wording?", "stale")
    with pytest.raises(ConflictError, match="stale"):
        in_transaction(sessions, review_paraphrases, [stale], "approved", team_id=None)
    assert in_transaction(sessions, review_paraphrases, [stale], "rejected", team_id=None) == [
        stale
    ]


def test_run_freezes_canonical_first_then_approved_in_approval_order(
    sessions: sessionmaker[Session], name: str
) -> None:
    suite_id, _, ids = suite_with_paraphrases(sessions, name)
    # Approved out of creation order: the later approval comes later in the run.
    in_transaction(sessions, review_paraphrases, [ids[3]], "approved", team_id=None)
    in_transaction(sessions, review_paraphrases, [ids[0], ids[1]], "approved", team_id=None)
    created = in_transaction(sessions, create_run, suite_id, team_id=None)
    # paraphrases_per_question 3 = the canonical + the first two approvals; pending never sent.
    assert run_wordings(sessions, created.run_id) == [
        "What is the indemnity cap?",
        "Which cap?",
        "How big is the cap?",
    ]
    assert (created.n_samples, created.short_of_paraphrases) == (6, {})
    with sessions() as session:
        samples = sample_repo.samples_of_run(session, created.run_id)
    assert [(s.paraphrase_index, s.sample_index, s.status) for s in samples] == [
        (p, i, "pending") for p in range(3) for i in range(2)
    ]
    assert [s.paraphrase_id for s in samples][::2] == [None, ids[3], ids[0]]
    assert len({s.seed for s in samples}) == 6


def test_run_without_enough_approvals_says_so_and_later_approvals_do_not_change_it(
    sessions: sessionmaker[Session], name: str
) -> None:
    suite_id, _, ids = suite_with_paraphrases(sessions, name)
    created = in_transaction(sessions, create_run, suite_id, team_id=None)
    assert (created.n_samples, created.short_of_paraphrases) == (2, {"cap": 0})
    in_transaction(sessions, review_paraphrases, ids, "approved", team_id=None)
    assert run_wordings(sessions, created.run_id) == ["What is the indemnity cap?"]
    later = in_transaction(sessions, create_run, suite_id, team_id=None)
    assert len(run_wordings(sessions, later.run_id)) == 3


def test_a_sample_slot_exists_once_per_run(sessions: sessionmaker[Session], name: str) -> None:
    suite_id, cap, _ = suite_with_paraphrases(sessions, name)
    created = in_transaction(sessions, create_run, suite_id, team_id=None)
    slot = {
        "run_id": created.run_id,
        "team_id": 0,
        "question_id": cap,
        "paraphrase_index": 0,
        "sample_index": 1,
        "status": "pending",
        "attempts": 0,
    }
    with sessions() as session:
        slot["team_id"] = suite_repo.questions_by_ids(session, [cap])[cap].team_id
    with pytest.raises(IntegrityError):
        in_transaction(sessions, sample_repo.insert_samples, [slot])


def test_a_scheduled_slot_starts_one_run(sessions: sessionmaker[Session], name: str) -> None:
    suite_id, _, _ = suite_with_paraphrases(sessions, name)
    slot = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    first = in_transaction(
        sessions, create_run, suite_id, team_id=None, trigger="schedule", scheduled_for=slot
    )
    second = in_transaction(
        sessions, create_run, suite_id, team_id=None, trigger="schedule", scheduled_for=slot
    )
    assert (first.created, second.created, second.run_id) == (True, False, first.run_id)


def test_runs_of_a_suite_are_invisible_to_other_teams(
    sessions: sessionmaker[Session], name: str
) -> None:
    suite_id, _, _ = suite_with_paraphrases(sessions, name)
    with sessions() as session:
        owner = suite_repo.suite_by_id(session, suite_id, None)
        assert owner is not None
    with pytest.raises(NotFoundError, match="No suite"):
        in_transaction(sessions, create_run, suite_id, team_id=owner.team_id + 1000)
    created = in_transaction(sessions, create_run, suite_id, team_id=owner.team_id)
    assert created.created
