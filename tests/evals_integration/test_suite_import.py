"""Suite import and update on Postgres and SQLite: stable question ids, retirement, staleness."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session, sessionmaker

from evals.paraphrases import repository as paraphrase_repo
from evals.paraphrases.text import text_hash
from evals.suite import SuiteError
from evals.suites import repository as suite_repo
from evals.suites.importer import import_suite, parse_suite, suite_definition
from evals.transaction import in_transaction
from plumbline.models import EvalParaphrase

SUITE = """\
name: {name}
team: {team}
model: tiny
paraphrases_per_question: 3
questions:
  - id: cap
    text: What is the indemnity cap?
    answer: {{type: number, unit: months}}
    expected: 12
  - id: law
    text: Which law governs?
    answer: {{type: choice, options: [england, new york]}}
    paraphrases:
      - What law governs the contract?
"""


def load(name: str, team: str = "legal", **replace: str) -> str:
    text = SUITE.format(name=name, team=team)
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


def keys_and_ids(sessions: sessionmaker[Session], suite_id: int) -> dict[str, int]:
    with sessions() as session:
        rows = suite_repo.questions_of(session, suite_id, include_retired=True)
        return {q.key: q.id for q in rows if q.retired_at is None}


def add_generated(sessions: sessionmaker[Session], question_id: int, text: str, status: str) -> int:
    def work(session: Session) -> int:
        team_id = suite_repo.questions_by_ids(session, [question_id])[question_id].team_id
        row = EvalParaphrase(
            question_id=question_id,
            team_id=team_id,
            text=text,
            text_hash=text_hash(text),
            source="generated",
            status=status,
        )
        return paraphrase_repo.add_paraphrase(session, row).id

    return in_transaction(sessions, work)


def statuses(sessions: sessionmaker[Session], question_id: int) -> dict[str, str]:
    with sessions() as session:
        return {
            p.text: p.status for p in paraphrase_repo.paraphrases_of_question(session, question_id)
        }


def test_import_creates_team_suite_questions_and_round_trips(
    sessions: sessionmaker[Session], name: str
) -> None:
    suite = parse_suite(load(name))
    done = in_transaction(sessions, import_suite, suite, source_yaml=load(name))
    assert (done.created, done.revision, done.added, done.team) == (
        True,
        1,
        ("cap", "law"),
        "legal",
    )
    with sessions() as session:
        row = suite_repo.suite_by_id(session, done.suite_id, None)
        assert row is not None and row.source_yaml == load(name)
        rebuilt = suite_definition(row.settings, suite_repo.questions_of(session, row.id))
    assert rebuilt == suite


def test_reimport_of_the_same_suite_changes_nothing(
    sessions: sessionmaker[Session], name: str
) -> None:
    first = in_transaction(sessions, import_suite, parse_suite(load(name)))
    ids = keys_and_ids(sessions, first.suite_id)
    again = in_transaction(sessions, import_suite, parse_suite(load(name)))
    assert (again.suite_id, again.created, again.revision) == (first.suite_id, False, 1)
    assert (again.added, again.changed, again.retired) == ((), (), ())
    assert keys_and_ids(sessions, first.suite_id) == ids


def test_reworded_question_keeps_its_id_and_its_generated_paraphrases_go_stale(
    sessions: sessionmaker[Session], name: str
) -> None:
    first = in_transaction(sessions, import_suite, parse_suite(load(name)))
    cap_id = keys_and_ids(sessions, first.suite_id)["cap"]
    add_generated(sessions, cap_id, "How big is the indemnity cap?", "approved")
    add_generated(sessions, cap_id, "What cap applies to indemnity?", "pending")
    add_generated(sessions, cap_id, "Tell me the cap.", "rejected")
    reworded = load(name, **{"What is the indemnity cap?": "What is the cap on indemnities?"})
    done = in_transaction(sessions, import_suite, parse_suite(reworded))
    assert (done.changed, done.stale_paraphrases, done.revision) == (("cap",), 2, 2)
    assert keys_and_ids(sessions, first.suite_id)["cap"] == cap_id
    assert statuses(sessions, cap_id) == {
        "How big is the indemnity cap?": "stale",
        "What cap applies to indemnity?": "stale",
        "Tell me the cap.": "rejected",
    }


def test_threshold_change_bumps_revision_without_touching_paraphrases(
    sessions: sessionmaker[Session], name: str
) -> None:
    first = in_transaction(sessions, import_suite, parse_suite(load(name)))
    cap_id = keys_and_ids(sessions, first.suite_id)["cap"]
    add_generated(sessions, cap_id, "How big is the indemnity cap?", "approved")
    stricter = load(
        name, **{"paraphrases_per_question: 3": "paraphrases_per_question: 3\nthreshold: 0.95"}
    )
    done = in_transaction(sessions, import_suite, parse_suite(stricter))
    assert (done.revision, done.changed, done.stale_paraphrases) == (2, (), 0)
    assert statuses(sessions, cap_id) == {"How big is the indemnity cap?": "approved"}


def test_dropped_question_is_retired_and_restored_with_the_same_id(
    sessions: sessionmaker[Session], name: str
) -> None:
    first = in_transaction(sessions, import_suite, parse_suite(load(name)))
    law_id = keys_and_ids(sessions, first.suite_id)["law"]
    without_law = load(name).split("  - id: law")[0]
    done = in_transaction(sessions, import_suite, parse_suite(without_law))
    assert done.retired == ("law",)
    assert "law" not in keys_and_ids(sessions, first.suite_id)
    back = in_transaction(sessions, import_suite, parse_suite(load(name)))
    assert back.changed == ("law",)
    assert keys_and_ids(sessions, first.suite_id)["law"] == law_id


def test_hand_written_paraphrases_are_approved_and_follow_the_file(
    sessions: sessionmaker[Session], name: str
) -> None:
    first = in_transaction(sessions, import_suite, parse_suite(load(name)))
    law_id = keys_and_ids(sessions, first.suite_id)["law"]
    assert statuses(sessions, law_id) == {"What law governs the contract?": "approved"}
    swapped = load(name, **{"What law governs the contract?": "Under which law is it?"})
    in_transaction(sessions, import_suite, parse_suite(swapped))
    assert statuses(sessions, law_id) == {
        "What law governs the contract?": "stale",
        "Under which law is it?": "approved",
    }


def test_same_suite_name_in_two_teams_are_two_suites(
    sessions: sessionmaker[Session], name: str
) -> None:
    legal = in_transaction(sessions, import_suite, parse_suite(load(name, team="legal")))
    sales = in_transaction(sessions, import_suite, parse_suite(load(name, team="sales")))
    assert legal.suite_id != sales.suite_id
    assert sales.created and sales.team == "sales"


def test_yaml_problems_name_line_and_field() -> None:
    bad = load("x", **{"type: number": "type: numbr"})
    with pytest.raises(SuiteError) as caught:
        parse_suite(bad)
    assert "line 8, questions[0].answer.type: unknown answer type 'numbr'" in str(caught.value)


def test_json_suites_parse_and_json_problems_name_the_field() -> None:
    good = (
        '{"name": "j", "team": "t", "model": "m", '
        '"questions": [{"id": "q", "text": "Q?", "answer": {"type": "text"}}]}'
    )
    assert parse_suite(good, "json").questions[0].id == "q"
    with pytest.raises(SuiteError, match=r"questions\[0\]\.text: required field missing"):
        parse_suite(good.replace('"text": "Q?", ', ""), "json")
    with pytest.raises(SuiteError, match=r"line 1, .*invalid JSON"):
        parse_suite("{nope", "json")
