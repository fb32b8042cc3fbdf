"""Suites and simulator scenarios for worker tests: a stable contract and a scripted drop."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction

STABLE_CAP = {"The indemnity cap is 12 months of fees.": 1}
UNSTABLE_CAP = {
    "The indemnity cap is 12 months of fees.": 46,
    "The indemnity cap is 24 months of fees.": 41,
    "There is no cap.": 13,
}
LAW = {"English law governs the agreement.": 1}

SUITE = """\
name: {name}
team: {team}
model: tiny
sampling: {{temperature: 1.0, max_tokens: 48, seed_policy: per_sample, seed: 3}}
paraphrases_per_question: 3
samples_per_paraphrase: {samples}
threshold: 0.9
{extra}
questions:
  - id: cap
    text: What is the indemnity cap in months under clause 9.2?
    answer: {{type: number, unit: months}}
    critical: true
    paraphrases:
      - How many months of fees is the indemnity capped at under clause 9.2?
      - Under clause 9.2, what is the indemnity cap in months?
  - id: law
    text: Which law governs the agreement?
    answer:
      type: choice
      options: [english, new york]
    paraphrases:
      - What law governs this agreement?
      - Under which law is the agreement governed?
"""


def scenarios(cap: dict[str, int]) -> list[dict[str, Any]]:
    """Simulator scenarios answering the cap question with `cap`, the law question stably."""
    return [
        {"name": "cap", "match": "(?i)indemnity", "answers": _answers(cap)},
        {"name": "law", "match": "(?i)law", "answers": _answers(LAW)},
    ]


def _answers(weights: dict[str, int]) -> list[dict[str, Any]]:
    return [{"text": text, "p": p} for text, p in weights.items()]


def suite_yaml(name: str, *, team: str = "legal", samples: int = 4, extra: str = "") -> str:
    """The suite with 2 questions x 3 wordings x `samples` samples."""
    return SUITE.format(name=name, team=team, samples=samples, extra=extra)


def import_yaml(sessions: sessionmaker[Session], text: str) -> int:
    """Import (or update) a suite; its id."""
    return in_transaction(sessions, import_suite, parse_suite(text), source_yaml=text).suite_id
