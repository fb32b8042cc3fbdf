"""Did the question's prompt hit the context limit, or its answer the output limit?"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def context_signals(group: pd.DataFrame, fraction: float) -> dict[str, Any]:
    """Context flags of one question's samples.

    - context_near_limit: some prompt used at least `fraction` of max_model_len (a long document
      was probably cut by retrieval or the template before it got here).
    - output_truncated: some completion stopped on `length`, so its answer may be cut off.
    - context_truncated: the caller marked the context as cut to fit.
    """
    ratio = (group["prompt_tokens"] / group["max_model_len"]).astype("Float64")
    max_ratio = ratio.max(skipna=True)
    max_fraction = math.nan if pd.isna(max_ratio) else float(max_ratio)
    near_limit = bool((ratio >= fraction).fillna(False).any())
    output_truncated = bool((group["finish_reason"] == "length").fillna(False).any())
    context_truncated = bool(group["context_truncated"].any())
    return {
        "max_prompt_fraction": max_fraction,
        "context_near_limit": near_limit,
        "output_truncated": output_truncated,
        "context_truncated": context_truncated,
        "context_flag": near_limit or output_truncated or context_truncated,
    }
