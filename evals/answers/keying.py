"""Turn the completions of one question into answer keys, cheapest comparison first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from evals.answers.choice import parse_choice
from evals.answers.json_field import key_for_value, parse_json_field
from evals.answers.number import NumberReading, read_number, reading_equal_key, reading_key
from evals.answers.outcome import AnswerOutcome, ParsedAnswer, ParseFailure
from evals.answers.regex_capture import key_for_captured, parse_regex
from evals.answers.semantic import TextEmbedder, cluster_by_similarity
from plumbline.answers.normalize import answer_region, normalize_text
from plumbline.answers.specs import (
    AnswerSpec,
    ChoiceAnswer,
    ExpectedValue,
    JsonFieldAnswer,
    NumberAnswer,
    RegexAnswer,
    SemanticAnswer,
    expected_as_text,
)


@dataclass(frozen=True, slots=True)
class KeyedAnswers:
    """The outcome of every completion of a question, and the expected answer's key if given."""

    outcomes: tuple[AnswerOutcome, ...]
    expected_key: str | None


def parse_answer(spec: AnswerSpec, text: str) -> AnswerOutcome:
    """Parse one completion on its own (semantic answers get their normalised text)."""
    if isinstance(spec, NumberAnswer):
        reading = read_number(spec, text)
        return (
            reading
            if isinstance(reading, ParseFailure)
            else ParsedAnswer(reading_key(spec, reading))
        )
    if isinstance(spec, ChoiceAnswer):
        return parse_choice(spec, text)
    if isinstance(spec, RegexAnswer):
        return parse_regex(spec, text)
    if isinstance(spec, JsonFieldAnswer):
        return parse_json_field(spec, text)
    return _text_key(text)


def parse_expected(spec: AnswerSpec, expected: ExpectedValue) -> AnswerOutcome:
    """The key of an expected answer as a suite states it (a regex's expected is the capture)."""
    if isinstance(spec, RegexAnswer):
        return key_for_captured(spec, expected_as_text(expected))
    if isinstance(spec, JsonFieldAnswer):
        return key_for_value(spec, expected)
    if isinstance(spec, ChoiceAnswer | NumberAnswer):
        return parse_answer(spec, expected_as_text(expected))
    return _text_key(expected_as_text(expected))


def key_answers(
    spec: AnswerSpec,
    texts: Sequence[str],
    *,
    expected: ExpectedValue | None = None,
    embedder: TextEmbedder | None = None,
) -> KeyedAnswers:
    """Keys for all completions of one question, so that equivalent answers share a key."""
    if isinstance(spec, NumberAnswer):
        return _key_numbers(spec, texts, expected)
    if isinstance(spec, SemanticAnswer):
        return _key_semantic(spec, texts, expected, embedder)
    outcomes = tuple(parse_answer(spec, t) for t in texts)
    expected_key = None
    if expected is not None:
        parsed = parse_expected(spec, expected)
        expected_key = parsed.key if isinstance(parsed, ParsedAnswer) else None
    return KeyedAnswers(outcomes, expected_key)


def _text_key(text: str) -> AnswerOutcome:
    key = normalize_text(answer_region(text))
    return ParsedAnswer(key) if key else ParseFailure("empty answer")


def _key_numbers(
    spec: NumberAnswer, texts: Sequence[str], expected: ExpectedValue | None
) -> KeyedAnswers:
    # Tolerance is not transitive, so clusters form around leaders: expected first, then by count.
    readings = [read_number(spec, t) for t in texts]
    parsed = [r for r in readings if isinstance(r, NumberReading)]
    counts = Counter(reading_key(spec, r) for r in parsed)
    leaders: list[NumberReading] = []
    expected_reading = (
        read_number(spec, expected_as_text(expected)) if expected is not None else None
    )
    if isinstance(expected_reading, NumberReading):
        leaders.append(expected_reading)
    for reading in sorted(parsed, key=lambda r: -counts[reading_key(spec, r)]):
        if reading_equal_key(spec, reading, leaders) is None:
            leaders.append(reading)
    outcomes: list[AnswerOutcome] = []
    for item in readings:
        if isinstance(item, ParseFailure):
            outcomes.append(item)
        else:
            leader = reading_equal_key(spec, item, leaders)
            assert leader is not None
            outcomes.append(ParsedAnswer(leader))
    expected_key = (
        reading_key(spec, expected_reading) if isinstance(expected_reading, NumberReading) else None
    )
    return KeyedAnswers(tuple(outcomes), expected_key)


def _key_semantic(
    spec: SemanticAnswer,
    texts: Sequence[str],
    expected: ExpectedValue | None,
    embedder: TextEmbedder | None,
) -> KeyedAnswers:
    if embedder is None:
        raise ValueError("semantic answers need an embedder (e.g. MiniLmEmbedder())")
    regions = [answer_region(t).strip() for t in texts]
    usable = [r for r in regions if normalize_text(r)]
    keys, expected_key = cluster_by_similarity(
        usable,
        embedder,
        threshold=spec.threshold,
        guard_numbers=spec.guard_numbers,
        guard_negation=spec.guard_negation,
        reference=expected_as_text(expected) if expected is not None else None,
    )
    found = iter(keys)
    outcomes = tuple(
        ParsedAnswer(next(found)) if normalize_text(r) else ParseFailure("empty answer")
        for r in regions
    )
    return KeyedAnswers(outcomes, expected_key)
