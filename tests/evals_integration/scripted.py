"""Scripted answer distributions for the simulator, and the suite that asks about them."""

from __future__ import annotations

from typing import Any

CAP_ANSWERS = {
    "The indemnity cap is 12 months of fees.": 46,
    "The indemnity cap is 24 months of fees.": 41,
    "There is no cap.": 13,
}
LAW_ANSWERS = {
    "English law governs the agreement.": 99,
    "New York law governs the agreement.": 1,
}
CAP_PARAPHRASES = [
    "Under clause 9.2, how many months of fees is the indemnity capped at?",
    "How many months of fees does clause 9.2 set as the indemnity cap?",
    "What indemnity cap, in months, does clause 9.2 give?",
    "what is the indemnity cap in months under clause 9.2",  # the canonical, reworded only in case
    "What is the cap on indemnity?",  # drops "9.2": refused by the generator's checks
]
LAW_PARAPHRASES = [
    "Under which law is the agreement governed?",
    "What is the governing law of the agreement?",
    "Which jurisdiction's law governs this agreement?",
]

SUITE_YAML = """\
name: {name}
team: {team}
model: tiny
description: Contract questions with scripted answer distributions
sampling:
  temperature: 1.0
  max_tokens: 64
  seed_policy: per_sample
  seed: 7
paraphrases_per_question: 4
samples_per_paraphrase: {samples}
threshold: 0.9
questions:
  - id: cap
    text: What is the indemnity cap in months under clause 9.2?
    answer: {{type: number, unit: months}}
    expected: 12
    critical: true
  - id: law
    text: Which law governs the agreement?
    answer:
      type: choice
      options: [english, new york]
    paraphrases:
      - What law governs this agreement?
"""


def scenario(name: str, match: str, answers: dict[str, int]) -> dict[str, Any]:
    """A simulator scenario answering prompts that match with the weighted answers."""
    return {
        "name": name,
        "match": match,
        "answers": [{"text": text, "p": p} for text, p in answers.items()],
    }


def json_list(items: list[str]) -> str:
    """A JSON array as an LLM would write it."""
    import json

    return json.dumps(items)


def scenarios() -> list[dict[str, Any]]:
    """Paraphrase generation first (its prompt also names the question), then the answers."""
    return [
        scenario(
            "cap-paraphrases",
            r"Original question:\n[^\n]*indemnity",
            {
                json_list(CAP_PARAPHRASES): 1,
            },
        ),
        scenario(
            "law-paraphrases",
            r"Original question:\n[^\n]*law",
            {
                json_list(LAW_PARAPHRASES): 1,
            },
        ),
        scenario("cap", r"indemnity", CAP_ANSWERS),
        scenario("law", r"law|jurisdiction", LAW_ANSWERS),
    ]


def suite_yaml(name: str, team: str, samples: int = 10) -> str:
    """The suite YAML with its name, team and samples per paraphrase filled in."""
    return SUITE_YAML.format(name=name, team=team, samples=samples)
