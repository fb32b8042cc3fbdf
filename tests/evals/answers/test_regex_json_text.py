"""Regex captures, JSON fields and SQuAD-normalised text."""

from __future__ import annotations

import pytest

from evals.answers import (
    JsonFieldAnswer,
    ParsedAnswer,
    ParseFailure,
    RegexAnswer,
    TextAnswer,
    normalize_text,
    parse_answer,
    parse_expected,
)


def test_regex_named_group_is_normalised() -> None:
    spec = RegexAnswer(pattern=r"governed by the laws of (?P<law>[A-Za-z ]+?)\.", group="law")
    text = "This agreement is governed by the laws of The State of New York."
    assert parse_answer(spec, text) == ParsedAnswer("state of new york")
    assert parse_answer(spec, "No governing law.") == ParseFailure("pattern did not match")


def test_regex_group_must_exist_and_pattern_must_compile() -> None:
    with pytest.raises(ValueError, match="group 2 not in pattern"):
        RegexAnswer(pattern=r"(a)", group=2)
    with pytest.raises(ValueError, match="invalid regex: missing \\), unterminated subpattern"):
        RegexAnswer(pattern=r"(a")


def test_json_field_in_fences_and_bare() -> None:
    spec = JsonFieldAnswer(path="cap.months")
    fenced = 'Here you go:\n```json\n{"cap": {"months": 12.0, "basis": "fees"}}\n```'
    assert parse_answer(spec, fenced) == ParsedAnswer("12")
    assert parse_answer(spec, 'Result {"cap": {"months": 12}} done') == ParsedAnswer("12")
    assert parse_answer(
        JsonFieldAnswer(path="items[1].name"), '{"items": [{"name": "a"}, {"name": "The B"}]}'
    ) == (ParsedAnswer("b"))


def test_json_field_failures() -> None:
    spec = JsonFieldAnswer(path="cap.months")
    assert parse_answer(spec, "twelve months") == ParseFailure("no JSON found")
    assert parse_answer(spec, '{"cap": {"years": 1}}') == ParseFailure(
        "path 'cap.months' not found in the JSON"
    )
    assert parse_answer(spec, '{"cap": {"months": null}}') == ParseFailure("field is null")
    assert parse_expected(spec, 12) == ParsedAnswer("12")


def test_squad_normalisation() -> None:
    assert normalize_text("  The  Cap, is: TWELVE months!! ") == "cap is twelve months"
    assert normalize_text("An apple a day") == "apple day"
    assert parse_answer(TextAnswer(), "Reasoning...\nAnswer: The Bank of England.") == ParsedAnswer(
        "bank of england"
    )
    assert parse_answer(TextAnswer(), "Answer: the") == ParseFailure("empty answer")
