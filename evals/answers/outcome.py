"""The outcome of parsing one answer: an equivalence-class key or a parse failure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """An answer that parsed; answers with equal keys agree."""

    key: str


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """An answer that could not be parsed; it never agrees with anything."""

    reason: str


AnswerOutcome = ParsedAnswer | ParseFailure


def outcome_columns(outcomes: Iterable[AnswerOutcome]) -> tuple[list[str | None], list[str | None]]:
    """Split outcomes into the `answer_key` and `parse_error` columns of a sample frame."""
    keys: list[str | None] = []
    errors: list[str | None] = []
    for outcome in outcomes:
        if isinstance(outcome, ParsedAnswer):
            keys.append(outcome.key)
            errors.append(None)
        else:
            keys.append(None)
            errors.append(outcome.reason)
    return keys, errors
