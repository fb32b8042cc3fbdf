"""Runs of a real suite in the database, scored from synthetic answers (no gateway needed)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.decisions import AlertOutcome, decide_alerts
from evals.runs.creation import create_run
from evals.scoring import RunInfo, RunScore, score_run
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.settings import NotifySettings
from tests.evals.synthetic_runs import sample_frame

SUITE = """\
name: {name}
team: {team}
model: tiny
threshold: 0.9
alert:
  critical: {{consecutive: 2}}
  regression: {{enabled: false}}
  notify:
    - hook
    - {{name: inline, kind: slack, url: "http://127.0.0.1:9/slack"}}
questions:
  - id: cap
    text: What is the indemnity cap?
    answer: {{type: number}}
    critical: true
  - id: law
    text: Which law governs?
    answer: {{type: text}}
"""
GOOD = {"cap": [["12"] * 20] * 5, "law": [["england"] * 20] * 5}
BAD = {"cap": [["12"] * 10 + ["24"] * 10] * 5, "law": [["england"] * 20] * 5}


def import_alerting_suite(sessions: sessionmaker[Session], name: str, team: str = "legal") -> int:
    """The suite's id."""
    suite = parse_suite(SUITE.format(name=name, team=team))
    return in_transaction(sessions, import_suite, suite).suite_id


def scored(name: str, run_id: int, answers: dict[str, list[list[str]]]) -> RunScore:
    """A score of `answers` as run `run_id` of suite `name`."""
    return score_run(sample_frame(answers), RunInfo(name, str(run_id)), critical={"cap"})


def new_run(sessions: sessionmaker[Session], suite_id: int) -> int:
    """A new (unexecuted) run of the suite."""
    return in_transaction(sessions, create_run, suite_id, team_id=None).run_id


def decide(
    sessions: sessionmaker[Session],
    name: str,
    run_id: int,
    answers: dict[str, list[list[str]]],
    notify: NotifySettings,
) -> AlertOutcome:
    """Decide the run's alerts from a synthetic score, in one transaction."""
    score = scored(name, run_id, answers)
    return in_transaction(sessions, decide_alerts, run_id, score, notify, datetime.now(UTC))
