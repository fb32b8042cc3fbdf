"""Did a question's prompt hit the context limit, or its answer the output limit?"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def context_table(frame: pd.DataFrame, fraction: float) -> dict[str, dict[str, Any]]:
    """Context flags per question of a prepared sample frame.

    - context_near_limit: some prompt used at least `fraction` of max_model_len (a long document
      was probably cut by retrieval or the template before it got here).
    - output_truncated: some completion stopped on `length`, so its answer may be cut off.
    - context_truncated: the caller marked the context as cut to fit.
    """
    signals = pd.DataFrame(
        {
            "question_id": frame["question_id"],
            "ratio": (frame["prompt_tokens"] / frame["max_model_len"]).astype("float64"),
            "output_truncated": (frame["finish_reason"] == "length").fillna(False).astype(bool),
            "context_truncated": frame["context_truncated"].astype(bool),
        }
    )
    signals["near"] = (signals["ratio"] >= fraction).fillna(False)
    grouped = signals.groupby("question_id").agg(
        ratio=("ratio", "max"),
        near=("near", "any"),
        output_truncated=("output_truncated", "any"),
        context_truncated=("context_truncated", "any"),
    )
    table: dict[str, dict[str, Any]] = {}
    for qid, ratio, near, output, context in grouped.itertuples():
        table[str(qid)] = {
            "max_prompt_fraction": math.nan if pd.isna(ratio) else float(ratio),
            "context_near_limit": bool(near),
            "output_truncated": bool(output),
            "context_truncated": bool(context),
            "context_flag": bool(near or output or context),
        }
    return table
