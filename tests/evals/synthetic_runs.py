"""Build sample frames for tests from per-question answer lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd


def sample_frame(
    answers: Mapping[str, Sequence[Sequence[str | None]]], **columns: Mapping[str, object]
) -> pd.DataFrame:
    """One row per answer: answers[question][paraphrase][sample]; None is a parse failure.

    Extra keyword columns map question id -> value for every row of that question.
    """
    rows = []
    for question_id, paraphrases in answers.items():
        for p, samples in enumerate(paraphrases):
            for s, key in enumerate(samples):
                row: dict[str, object] = {
                    "question_id": question_id,
                    "paraphrase_index": p,
                    "sample_index": s,
                    "answer_key": key,
                    "parse_error": None if key is not None else "no number found",
                    "text": f"Answer: {key}",
                }
                for name, values in columns.items():
                    row[name] = values.get(question_id)
                rows.append(row)
    return pd.DataFrame(rows)


def uniform(key_counts: Mapping[str | None, int], paraphrases: int = 20) -> list[list[str | None]]:
    """Spread answers over paraphrases in order: 20 x 5 from e.g. {"12": 90, "24": 10}."""
    flat: list[str | None] = [k for k, n in key_counts.items() for _ in range(n)]
    per = len(flat) // paraphrases
    return [flat[i * per : (i + 1) * per] for i in range(paraphrases)]
