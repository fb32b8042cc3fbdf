"""Column types of the scored tables, so every export and reload sees the same frame."""

from __future__ import annotations

from typing import Final

import pandas as pd

QUESTION_DTYPES: Final[dict[str, str]] = {
    "question_id": "string",
    "n_samples": "int64",
    "n_paraphrases": "int64",
    "n_answers": "int64",
    "modal_answer": "string",
    "modal_count": "int64",
    "agreement": "float64",
    "agreement_lower": "float64",
    "agreement_upper": "float64",
    "modal_tie": "bool",
    "pairwise_agreement": "float64",
    "entropy": "float64",
    "entropy_normalised": "float64",
    "parse_failures": "int64",
    "parse_failure_rate": "float64",
    "expected_answer": "string",
    "accuracy": "float64",
    "paraphrases_breaking": "int64",
    "worst_paraphrase": "int64",
    "worst_paraphrase_share": "float64",
    "critical": "bool",
    "max_prompt_fraction": "float64",
    "context_near_limit": "bool",
    "output_truncated": "bool",
    "context_truncated": "bool",
    "context_flag": "bool",
    "divergence_position": "Int64",
    "divergence_margin": "float64",
    "divergence_verdict": "string",
    "divergence_explanation": "string",
    "repeatability": "string",
    "flags": "string",
}
PARAPHRASE_DTYPES: Final[dict[str, str]] = {
    "question_id": "string",
    "paraphrase_index": "int64",
    "n_samples": "int64",
    "modal_answer": "string",
    "modal_share": "float64",
    "question_mode_share": "float64",
    "matches_question_mode": "bool",
    "parse_failures": "int64",
}


def conform(frame: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    """The frame with exactly the schema's columns, in order, with the schema's types."""
    columns = {}
    for name, dtype in dtypes.items():
        series = (
            frame[name]
            if name in frame.columns
            else pd.Series([None] * len(frame), index=frame.index)
        )
        if dtype == "float64":
            series = pd.to_numeric(series, errors="coerce")
        columns[name] = series.astype(dtype)  # type: ignore[call-overload]
    return pd.DataFrame(columns, index=frame.index)
