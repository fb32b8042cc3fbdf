"""The sample frame: one row per sampled completion of a run, as scoring expects it.

Columns (required ones marked *):
- question_id* (str): the suite question.
- paraphrase_index* (int): index into the question's frozen paraphrase set.
- sample_index* (int): the sample's index within its paraphrase.
- answer_key* (str | null): the answer's equivalence class from `evals.answers`; null = failure.
- parse_error* (str | null): why the answer did not parse; set exactly when answer_key is null.
- text (str): the raw completion text.
- finish_reason (str | null): `stop`, `length`, `abort`, ... as the backend reported it.
- prompt_tokens, completion_tokens, max_model_len (int | null): usage and the served context size.
- temperature (float | null): the sampling temperature used.
- context_truncated (bool): the caller had to cut the question's context to fit.
- call_id (str | null): the gateway call that produced the sample.
"""

from __future__ import annotations

from typing import Any, Final, cast

import pandas as pd

REQUIRED_COLUMNS: Final = (
    "question_id",
    "paraphrase_index",
    "sample_index",
    "answer_key",
    "parse_error",
)
OPTIONAL_DEFAULTS: Final[dict[str, object]] = {
    "text": "",
    "finish_reason": None,
    "prompt_tokens": None,
    "completion_tokens": None,
    "max_model_len": None,
    "temperature": None,
    "context_truncated": False,
    "call_id": None,
}
_INTEGER_COLUMNS: Final = ("prompt_tokens", "completion_tokens", "max_model_len")
FAILURE_PREFIX: Final = "\x00failure:"


class SampleFrameError(ValueError):
    """The sample frame does not have the shape scoring needs."""


def prepare_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """A validated copy with optional columns filled in and types made uniform."""
    missing = [c for c in REQUIRED_COLUMNS if c not in samples.columns]
    if missing:
        raise SampleFrameError(f"sample frame lacks columns: {', '.join(missing)}")
    frame = samples.copy()
    for column, default in OPTIONAL_DEFAULTS.items():
        if column not in frame.columns:
            frame[column] = cast(Any, default)
    frame["question_id"] = frame["question_id"].astype(str)
    frame["paraphrase_index"] = frame["paraphrase_index"].astype("int64")
    frame["sample_index"] = frame["sample_index"].astype("int64")
    for column in _INTEGER_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Float64")
    frame["context_truncated"] = frame["context_truncated"].fillna(False).astype(bool)
    frame["answer_key"] = (
        frame["answer_key"].astype("object").where(frame["answer_key"].notna(), None)
    )
    has_key = frame["answer_key"].notna()
    has_error = frame["parse_error"].notna()
    if (has_key & has_error).any():
        raise SampleFrameError("a row has both answer_key and parse_error")
    # A row with neither is a failure too: an answer must never agree by default.
    frame["parse_error"] = frame["parse_error"].astype("object")
    frame.loc[~has_key & ~has_error, "parse_error"] = "no answer key"
    duplicated = frame.duplicated(["question_id", "paraphrase_index", "sample_index"])
    if duplicated.any():
        row = frame.loc[duplicated].iloc[0]
        raise SampleFrameError(
            f"duplicate sample {row['question_id']}/{row['paraphrase_index']}/{row['sample_index']}"
        )
    return frame.reset_index(drop=True)


def outcome_labels(frame: pd.DataFrame) -> pd.Series:
    """Each row's outcome: its answer key, or a label unique to that row for a failure."""
    failure_labels = pd.Series(
        [f"{FAILURE_PREFIX}{i}" for i in range(len(frame))], index=frame.index
    )
    return frame["answer_key"].where(frame["answer_key"].notna(), failure_labels).astype(str)
