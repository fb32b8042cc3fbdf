"""Suite YAML: valid suites load; every kind of mistake names its line and field path."""

from __future__ import annotations

import pytest

from evals.answers import ChoiceAnswer, NumberAnswer
from evals.scoring import Bound
from evals.suite import SuiteError, load_suite, suite_from_data

SUITE = """\
name: contracts
team: legal
model: llama-3-70b
sampling:
  temperature: 0.7
  top_p: 0.95
  max_tokens: 256
  seed_policy: per_sample
schedule: "0 3 * * *"
alert:
  suite: {consecutive: 2, recover_level: 0.93}
questions:
  - id: cap
    text: What is the indemnity cap?
    context: "Clause 14.2: liability is capped at twelve months of fees."
    answer: {type: number, unit: months}
    expected: 12
    critical: true
    paraphrases: ["How large is the indemnity cap?"]
  - id: law
    text: Which law governs the agreement?
    answer:
      type: choice
      options: [england, {value: new york, aliases: [ny]}]
  - id: party
    text: Who is the supplier?
    answer:
      type: regex
      pattern: "supplier is (\\\\w+)"
"""


def test_a_valid_suite_loads_with_defaults() -> None:
    suite = load_suite(SUITE)
    assert (
        suite.name,
        suite.paraphrases_per_question,
        suite.samples_per_paraphrase,
        suite.threshold,
    ) == (
        "contracts",
        20,
        5,
        0.90,
    )
    assert isinstance(suite.questions[0].answer, NumberAnswer)
    assert isinstance(suite.questions[1].answer, ChoiceAnswer)
    assert suite.questions[0].critical
    assert suite.sampling.seed_policy == "per_sample"
    policy = suite.alert_policy()
    assert (policy.suite.threshold, policy.suite.recover_at, policy.suite.bound) == (
        0.90,
        0.93,
        Bound.UPPER,
    )
    assert (policy.critical.recover_at, policy.critical.recover_bound) == (0.92, Bound.POINT)


def test_suite_threshold_is_inherited_by_rules() -> None:
    policy = load_suite(SUITE.replace("schedule:", "threshold: 0.8\nschedule:")).alert_policy()
    assert (policy.suite.threshold, policy.critical.threshold, policy.critical.recover_at) == (
        0.8,
        0.8,
        0.82,
    )


def test_greedy_suites_default_to_temperature_zero() -> None:
    suite = load_suite(
        SUITE.replace("  temperature: 0.7\n", "").replace("schedule:", "greedy: true\nschedule:")
    )
    assert suite.sampling.temperature == 0.0


def _error(text: str) -> str:
    with pytest.raises(SuiteError) as caught:
        load_suite(text)
    return str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'w+)"',
            'w+"',
            "line 29, questions[2].answer.pattern: "
            "invalid regex: missing ), unterminated subpattern",
        ),
        (
            "type: regex",
            "type: guess",
            "line 28, questions[2].answer.type: unknown answer type 'guess' (expected one of: "
            "number, choice, regex, json_field, text, semantic)",
        ),
        ('"0 3 * * *"', '"0 25 * * *"', "line 9, schedule: invalid cron expression '0 25 * * *'"),
        (
            "team: legal",
            "team: legal\nthreshold: 1.2",
            "line 3, threshold: Input should be less than 1",
        ),
        (
            "team: legal",
            "team: legal\nthreshold: 0",
            "line 3, threshold: Input should be greater than 0",
        ),
        (
            "expected: 12",
            "expected: soon",
            "line 17, questions[0].expected: does not parse as number: no number found",
        ),
        (
            "critical: true",
            "critical: true\n    colour: red",
            "line 19, questions[0].colour: unknown field",
        ),
        (
            "  top_p: 0.95",
            "  top_p: 0.95\n  top_p: 0.9",
            "line 7, (document): duplicate key 'top_p'",
        ),
        ("team: legal\n", "", "line 1, team: required field missing"),
        (
            "  - id: law",
            "  - id: cap",
            "line 20, questions[1].id: duplicate id 'cap' (see questions[0])",
        ),
        (
            "suite: {consecutive: 2, recover_level: 0.93}",
            "suite: {consecutive: 2, recover_level: 0.85}",
            "line 11, alert.suite.recover_level: below the threshold 0.9: the alert would flap",
        ),
        ("options: [england,", "options: [england", "invalid YAML"),
        ("      type: choice\n", "", "line 23, questions[1].answer: answer type missing"),
    ],
)
def test_errors_name_line_and_field(old: str, new: str, message: str) -> None:
    assert old in SUITE
    assert message in _error(SUITE.replace(old, new))


def test_broken_yaml_names_its_line() -> None:
    assert _error("name: x\nteam: [legal\nmodel: m\n").startswith(
        "line 3, (document): invalid YAML:"
    )
    assert _error("- just\n- a list\n") == "line 1, (document): a suite must be a YAML mapping"


def test_suites_from_api_bodies_name_the_path() -> None:
    with pytest.raises(SuiteError) as caught:
        suite_from_data(
            {
                "name": "x",
                "team": "t",
                "model": "m",
                "questions": [
                    {"id": "q", "text": "?", "answer": {"type": "number", "unit": "parsecs"}}
                ],
            }
        )
    assert str(caught.value) == "questions[0].answer.unit: unknown unit 'parsecs'"


def test_recover_level_is_checked_against_the_inherited_threshold() -> None:
    text = SUITE.replace("schedule:", "threshold: 0.8\nschedule:").replace(
        "recover_level: 0.93", "recover_level: 0.85"
    )
    assert load_suite(text).alert_policy().suite.recover_at == 0.85
