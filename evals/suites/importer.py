"""Import a suite (new or updated) from YAML or JSON, keeping question ids stable by key."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.orm import Session

from evals.paraphrases import repository as paraphrase_repo
from evals.paraphrases.text import text_hash
from evals.suite import Question, Suite, SuiteError, SuiteProblem, load_suite, suite_from_data
from evals.suites import repository as suite_repo
from plumbline.models import EvalParaphrase, EvalQuestion, EvalSuite
from plumbline.repositories import teams as team_repo

SuiteFormat = Literal["yaml", "json"]
# Column sizes of the stored names; the suite schema itself does not bound these.
MAX_LENGTHS = {"team": 128, "model": 256}
# A change to any of these makes generated paraphrases of the question stale.
WORDING_FIELDS = ("text", "context", "answer")


@dataclass(frozen=True, slots=True)
class SuiteImport:
    """What an import did: the suite, and which questions it added, changed or retired."""

    suite_id: int
    name: str
    team: str
    created: bool
    revision: int
    added: tuple[str, ...]
    changed: tuple[str, ...]
    retired: tuple[str, ...]
    stale_paraphrases: int


def parse_suite(text: str, fmt: SuiteFormat = "yaml") -> Suite:
    """Validate a suite document; raises SuiteError naming line (YAML) and field path."""
    if fmt == "yaml":
        suite = load_suite(text)
        _check_lengths(suite)
        return suite
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        problem = SuiteProblem(error.lineno, "(document)", f"invalid JSON: {error.msg}")
        raise SuiteError([problem]) from None
    except RecursionError:
        raise SuiteError(
            [SuiteProblem(1, "(document)", "invalid JSON: nested too deeply")]
        ) from None
    if not isinstance(data, dict):
        raise SuiteError([SuiteProblem(1, "(document)", "a suite must be a JSON object")])
    suite = suite_from_data(data)
    _check_lengths(suite)
    return suite


def _check_lengths(suite: Suite) -> None:
    problems = [
        SuiteProblem(None, field, f"at most {limit} characters")
        for field, limit in MAX_LENGTHS.items()
        if len(getattr(suite, field)) > limit
    ]
    if problems:
        raise SuiteError(problems)


def suite_settings(suite: Suite) -> dict[str, Any]:
    """The suite's fields other than questions, as stored (unset fields stay unset)."""
    return suite.model_dump(mode="json", exclude_unset=True, exclude={"questions"})


def question_spec(question: Question) -> dict[str, Any]:
    """A question as stored."""
    return question.model_dump(mode="json", exclude_unset=True)


def suite_definition(settings: dict[str, Any], questions: list[EvalQuestion]) -> Suite:
    """Rebuild the validated suite from its stored settings and questions."""
    return suite_from_data({**settings, "questions": [q.spec for q in questions]})


def import_suite(session: Session, suite: Suite, *, source_yaml: str | None = None) -> SuiteImport:
    """Create the suite (and its team) or update it in place; flushes, never commits."""
    _check_lengths(suite)
    now = datetime.now(UTC)
    team = team_repo.team_by_name(session, suite.team) or team_repo.add_team(session, suite.team)
    found = suite_repo.suites_named(session, suite.name, team.id)
    row = found[0] if found else None
    created = row is None
    if row is None:
        row = suite_repo.add_suite(
            session,
            EvalSuite(
                team_id=team.id,
                name=suite.name,
                model=suite.model,
                settings=suite_settings(suite),
                source_yaml=source_yaml,
                revision=1,
            ),
        )
    existing = {q.key: q for q in suite_repo.questions_of(session, row.id, include_retired=True)}
    added, changed, stale = [], [], 0
    for position, question in enumerate(suite.questions):
        current = existing.pop(question.id, None)
        if current is None:
            current = suite_repo.add_question(
                session,
                EvalQuestion(
                    suite_id=row.id,
                    team_id=team.id,
                    key=question.id,
                    position=position,
                    text=question.text,
                    spec=question_spec(question),
                ),
            )
            added.append(question.id)
        elif _differs(current, question, position):
            if _wording_changed(current.spec, question_spec(question)):
                stale += paraphrase_repo.retire_generated(session, current.id)
            current.position, current.text = position, question.text
            current.spec, current.retired_at = question_spec(question), None
            current.updated_at = now
            changed.append(question.id)
        _sync_written(session, current, question, now)
    retired = [key for key, q in existing.items() if q.retired_at is None]
    for key in retired:
        existing[key].retired_at = now
    settings_changed = row.settings != suite_settings(suite) or row.model != suite.model
    if not created and (added or changed or retired or settings_changed):
        row.revision += 1
        row.settings, row.model, row.updated_at = suite_settings(suite), suite.model, now
    if source_yaml is not None:
        row.source_yaml = source_yaml
    session.flush()
    return SuiteImport(
        suite_id=row.id,
        name=row.name,
        team=team.name,
        created=created,
        revision=row.revision,
        added=tuple(added),
        changed=tuple(changed),
        retired=tuple(retired),
        stale_paraphrases=stale,
    )


def _differs(row: EvalQuestion, question: Question, position: int) -> bool:
    return (
        row.retired_at is not None
        or row.position != position
        or row.spec != question_spec(question)
    )


def _wording_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return any(old.get(name) != new.get(name) for name in WORDING_FIELDS)


def _sync_written(session: Session, row: EvalQuestion, question: Question, now: datetime) -> None:
    """Hand-written paraphrases in the suite are approved as written; removed ones go stale."""
    stored = {p.text_hash: p for p in paraphrase_repo.paraphrases_of_question(session, row.id)}
    wanted = {text_hash(text): text for text in question.paraphrases}
    for digest, text in wanted.items():
        paraphrase = stored.get(digest)
        if paraphrase is None:
            paraphrase_repo.add_paraphrase(
                session,
                EvalParaphrase(
                    question_id=row.id,
                    team_id=row.team_id,
                    text=text.strip(),
                    text_hash=digest,
                    source="suite",
                    status="approved",
                    reviewed_at=now,
                ),
            )
        elif paraphrase.status != "approved":
            paraphrase.source, paraphrase.status, paraphrase.reviewed_at = "suite", "approved", now
    for digest, paraphrase in stored.items():
        dropped = paraphrase.source == "suite" and digest not in wanted
        if dropped and paraphrase.status == "approved":
            paraphrase.status = "stale"
