"""Choice answers with aliases."""

from __future__ import annotations

import pytest

from evals.answers import ChoiceAnswer, ParsedAnswer, ParseFailure, parse_answer

SPEC = ChoiceAnswer.model_validate(
    {
        "options": [
            {"value": "yes", "aliases": ["y", "true", "correct"]},
            {"value": "no", "aliases": ["n", "false"]},
            {"value": "not stated", "aliases": ["unknown"]},
        ]
    }
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Yes.", "yes"),
        ("TRUE", "yes"),
        ("The contract is silent, so: not stated", "not stated"),
        ("Looking at clause 3... yes and no are both arguable.\nAnswer: **No**", "no"),
        ("That is correct", "yes"),
    ],
)
def test_choice(text: str, key: str) -> None:
    assert parse_answer(SPEC, text) == ParsedAnswer(key)


def test_ambiguous_and_missing_choices_fail() -> None:
    assert parse_answer(SPEC, "yes or no, hard to say") == ParseFailure(
        "ambiguous: names 'yes', 'no'"
    )
    assert parse_answer(SPEC, "maybe") == ParseFailure("names none of the options")


def test_plain_string_options_and_clashing_aliases() -> None:
    assert ChoiceAnswer.model_validate({"options": ["a1", "b2"]}).options[1].value == "b2"
    with pytest.raises(ValueError, match="names both"):
        ChoiceAnswer.model_validate({"options": [{"value": "x", "aliases": ["y"]}, "y"]})
