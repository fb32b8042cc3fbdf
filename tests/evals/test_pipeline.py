"""The pure pieces end to end: suite YAML, prompts, answer keys, score, alert, report."""

from __future__ import annotations

import pandas as pd

from evals.alerting import SUITE_KEY, Action, AlertState, evaluate_alerts, observe_run
from evals.answers import key_answers, outcome_columns
from evals.report import render_html
from evals.scoring import RunInfo, score_run
from evals.suite import load_suite, render_prompt

SUITE = """\
name: contracts
team: legal
model: tiny
paraphrases_per_question: 2
samples_per_paraphrase: 3
alert: {suite: {consecutive: 1}}
questions:
  - id: cap
    text: What is the indemnity cap?
    answer: {type: number, unit: months}
    expected: 12
    critical: true
  - id: law
    text: Which law governs?
    answer: {type: choice, options: [england, new york]}
"""

COMPLETIONS = {
    "cap": [
        [
            "The cap is twelve months of fees.\nAnswer: 12 months",
            "Answer: 1 year",
            "Answer: 24 months",
        ],
        ["Answer: 12", "I cannot tell.", "Answer: 12 months"],
    ],
    "law": [
        ["Answer: England"] * 3,
        ["Answer: england", "English law, so: england", "Answer: New York"],
    ],
}


def test_pipeline() -> None:
    suite = load_suite(SUITE)
    rows = []
    for question in suite.questions:
        texts = [t for paraphrase in COMPLETIONS[question.id] for t in paraphrase]
        assert "Answer:" in render_prompt(question).as_openai()[1]["content"]
        keyed = key_answers(question.answer, texts, expected=question.expected)
        answer_keys, errors = outcome_columns(keyed.outcomes)
        for i, (text, key, error) in enumerate(zip(texts, answer_keys, errors, strict=True)):
            rows.append(
                {
                    "question_id": question.id,
                    "paraphrase_index": i // suite.samples_per_paraphrase,
                    "sample_index": i % suite.samples_per_paraphrase,
                    "text": text,
                    "answer_key": key,
                    "parse_error": error,
                }
            )
    score = score_run(
        pd.DataFrame(rows),
        RunInfo(suite.name, "r1", threshold=suite.threshold),
        expected_keys={"cap": "12 month"},
        critical={q.id for q in suite.questions if q.critical},
    )
    cap = score.questions.set_index("question_id").loc["cap"]
    assert (cap["modal_answer"], cap["modal_count"], cap["parse_failures"]) == ("12 month", 4, 1)
    assert cap["accuracy"] == 4 / 6
    evaluation = evaluate_alerts(AlertState(), observe_run(score), suite.alert_policy())
    decision = evaluation.decision(SUITE_KEY)
    assert decision is not None
    assert decision.action is Action.NOTHING  # 12 samples cannot show agreement is below 90%
    assert "12 month" in render_html(score)
