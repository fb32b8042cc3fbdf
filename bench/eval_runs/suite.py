"""A generated suite of questions x wordings x samples, and the simulator answer they all get."""

from __future__ import annotations

from typing import Any

ANSWER = "The cap is 12 months of fees."


def suite_yaml(name: str, questions: int, wordings: int, samples: int) -> str:
    """A suite whose every question has `wordings` wordings (its text and wordings - 1 more)."""
    lines = [
        f"name: {name}",
        "team: bench",
        "model: tiny",
        "sampling: {temperature: 1.0, max_tokens: 32, seed_policy: per_sample, seed: 3}",
        f"paraphrases_per_question: {wordings}",
        f"samples_per_paraphrase: {samples}",
        "threshold: 0.9",
        "questions:",
    ]
    for q in range(questions):
        lines += [
            f"  - id: q{q}",
            f"    text: What is the liability cap under clause {q}.1, in months?",
            "    answer: {type: number, unit: months}",
            "    paraphrases:",
        ]
        lines += [
            f"      - In wording {w}, how many months of fees is the cap of clause {q}.1?"
            for w in range(1, wordings)
        ]
    return "\n".join(lines) + "\n"


def simulator_config(max_num_seqs: int, decode_ms: float) -> dict[str, Any]:
    """A backend of fixed capacity: `max_num_seqs` sequences, `decode_ms` per step, no prefill.

    No slowdown per extra sequence, so the backend-only limit is plain arithmetic:
    total decode steps / batch capacity x step time.
    """
    return {
        "timing": {
            "max_num_seqs": max_num_seqs,
            "decode_ms_per_token": decode_ms,
            "decode_ms_per_extra_seq": 0.0,
            "prefill_ms_per_token": 0.0,
        },
        "scenarios": [{"name": "cap", "match": ".", "answers": [{"text": ANSWER, "p": 1}]}],
    }
