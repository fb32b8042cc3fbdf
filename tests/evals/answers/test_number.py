"""Numeric answers: extraction from free text, words, units and tolerance."""

from __future__ import annotations

import pytest

from evals.answers import NumberAnswer, ParsedAnswer, ParseFailure, key_answers, parse_answer


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("The indemnity cap is 12 months of fees (clause 14.2).", "12 month"),
        ("It is capped at twelve months.", "12 month"),
        ("One year.", "12 month"),
        ("a year of fees", "12 month"),
        ("Twenty-four months", "24 month"),
        ("Thinking... the clause says 6.\nAnswer: 24 months", "24 month"),
        ("18", "18 month"),
        ("one hundred and five days", "3.449762829 month"),
    ],
)
def test_number_in_months(text: str, key: str) -> None:
    assert parse_answer(NumberAnswer(unit="months"), text) == ParsedAnswer(key)


def test_units_convert_without_a_spec_unit() -> None:
    spec = NumberAnswer()
    keys = {
        parse_answer(spec, t) for t in ("12 months", "1 year", "twelve months", "365.2425 days")
    }
    assert keys == {ParsedAnswer("1 year")}
    assert parse_answer(spec, "12") != parse_answer(spec, "12 months")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("$1.5 million", "1500000 USD"),
        ("1,250 EUR", "1250 EUR"),
        ("5%", "5 percent"),
        ("-3.5 kg", "-3.5 kg"),
    ],
)
def test_scales_currency_percent_and_signs(text: str, key: str) -> None:
    assert parse_answer(NumberAnswer(), text) == ParsedAnswer(key)


def test_inconvertible_unit_and_no_number_fail() -> None:
    assert parse_answer(NumberAnswer(unit="months"), "5 kg") == ParseFailure(
        "unit 'kg' cannot be converted to 'month'"
    )
    assert isinstance(parse_answer(NumberAnswer(), "no idea"), ParseFailure)


def test_tolerance_clusters_close_values_around_the_expected_answer() -> None:
    spec = NumberAnswer(rel_tol=0.01)
    keyed = key_answers(spec, ["100", "100.5", "99.6", "103", "n/a"], expected=100)
    keys = [o.key if isinstance(o, ParsedAnswer) else None for o in keyed.outcomes]
    assert keys == ["100", "100", "100", "103", None]
    assert keyed.expected_key == "100"


def test_absolute_tolerance_is_in_the_spec_unit() -> None:
    spec = NumberAnswer(unit="months", abs_tol=1.0)
    keyed = key_answers(spec, ["12 months", "1 year and a bit: 13 months", "15 months"])
    assert [o.key for o in keyed.outcomes if isinstance(o, ParsedAnswer)] == [
        "12 month",
        "12 month",
        "15 month",
    ]
