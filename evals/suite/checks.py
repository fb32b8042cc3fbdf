"""Checks across fields of a suite that a single field's validator cannot make."""

from __future__ import annotations

from evals.answers import ParseFailure, SemanticAnswer, parse_expected
from evals.suite.schema import Suite

Finding = tuple[tuple[int | str, ...], str]


def cross_checks(suite: Suite) -> list[Finding]:
    """Each (field location, message) wrong with an otherwise valid suite."""
    return [*_question_checks(suite), *_sampling_checks(suite), *_alert_checks(suite)]


def _question_checks(suite: Suite) -> list[Finding]:
    found: list[Finding] = []
    first: dict[str, int] = {}
    for i, question in enumerate(suite.questions):
        if question.id in first:
            found.append(
                (
                    ("questions", i, "id"),
                    f"duplicate id {question.id!r} (see questions[{first[question.id]}])",
                )
            )
        first.setdefault(question.id, i)
        if len(question.paraphrases) > suite.paraphrases_per_question:
            limit = suite.paraphrases_per_question
            found.append(
                (("questions", i, "paraphrases"), f"more than paraphrases_per_question ({limit})")
            )
        if question.expected is not None and not isinstance(question.answer, SemanticAnswer):
            outcome = parse_expected(question.answer, question.expected)
            if isinstance(outcome, ParseFailure):
                found.append(
                    (
                        ("questions", i, "expected"),
                        f"does not parse as {question.answer.type}: {outcome.reason}",
                    )
                )
    return found


def _sampling_checks(suite: Suite) -> list[Finding]:
    sampling = suite.sampling
    if suite.greedy and sampling.temperature != 0.0 and "temperature" in sampling.model_fields_set:
        return [(("sampling", "temperature"), "greedy suites sample at temperature 0")]
    return []


def _alert_checks(suite: Suite) -> list[Finding]:
    # Rules without a threshold inherit the suite's; their recover level must still clear it.
    found: list[Finding] = []
    for name in ("suite", "critical"):
        rule = getattr(suite.alert, name)
        threshold = rule.threshold if "threshold" in rule.model_fields_set else suite.threshold
        if rule.recover_level is not None and rule.recover_level < threshold:
            found.append(
                (
                    ("alert", name, "recover_level"),
                    f"below the threshold {threshold}: the alert would flap",
                )
            )
    return found
