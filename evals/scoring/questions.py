"""Per-question and per-paraphrase scores of one run's sample frame."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from evals.scoring.context import context_signals
from evals.scoring.samples import outcome_labels
from evals.scoring.statistics import (
    cluster_entropy,
    normalised_entropy,
    pairwise_agreement,
    wilson_interval,
)

_FAILURE = "\x00"


@dataclass(frozen=True, slots=True)
class ModalAnswer:
    """The most common parsed answer of a group of samples and how many gave it."""

    key: str | None
    count: int
    tie: bool


def modal_answer(outcomes: pd.Series) -> ModalAnswer:
    """Largest cluster among parsed answers (ties broken by key); failures are singletons."""
    counts = outcomes.value_counts()
    parsed = counts[~counts.index.str.startswith(_FAILURE)]
    if parsed.empty:
        return ModalAnswer(None, 1 if len(outcomes) else 0, False)
    top = int(parsed.max())
    leaders = sorted(str(k) for k in parsed[parsed == top].index)
    return ModalAnswer(leaders[0], top, len(leaders) > 1)


def score_questions(
    frame: pd.DataFrame,
    *,
    expected_keys: Mapping[str, str | None] | None = None,
    critical: Collection[str] = (),
    confidence: float = 0.95,
    context_fraction: float = 0.95,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The question table and the paraphrase table of a prepared sample frame."""
    frame = frame.assign(outcome=outcome_labels(frame))
    question_rows: list[dict[str, Any]] = []
    paraphrase_rows: list[dict[str, Any]] = []
    for question_id, group in frame.groupby("question_id", sort=True):
        qid = str(question_id)
        mode = modal_answer(group["outcome"])
        counts = [int(c) for c in group["outcome"].value_counts()]
        n = len(group)
        interval = wilson_interval(mode.count, n, confidence)
        expected = (expected_keys or {}).get(qid)
        failures = int(group["answer_key"].isna().sum())
        paraphrases = [
            _paraphrase_row(qid, int(cast(int, p)), g, mode.key)
            for p, g in group.groupby("paraphrase_index")
        ]
        paraphrase_rows.extend(paraphrases)
        breaking = [p for p in paraphrases if not p["matches_question_mode"]]
        worst = min(paraphrases, key=lambda p: (p["question_mode_share"], p["paraphrase_index"]))
        question_rows.append(
            {
                "question_id": qid,
                "n_samples": n,
                "n_paraphrases": len(paraphrases),
                "n_answers": len(counts),
                "modal_answer": mode.key,
                "modal_count": mode.count,
                "agreement": interval.point,
                "agreement_lower": interval.lower,
                "agreement_upper": interval.upper,
                "modal_tie": mode.tie,
                "pairwise_agreement": pairwise_agreement(counts),
                "entropy": cluster_entropy(counts),
                "entropy_normalised": normalised_entropy(counts),
                "parse_failures": failures,
                "parse_failure_rate": failures / n,
                "expected_answer": expected,
                "accuracy": float((group["answer_key"] == expected).mean())
                if expected
                else math.nan,
                "paraphrases_breaking": len(breaking),
                "worst_paraphrase": worst["paraphrase_index"],
                "worst_paraphrase_share": worst["question_mode_share"],
                "critical": qid in critical,
                **context_signals(group, context_fraction),
            }
        )
    return pd.DataFrame(question_rows), pd.DataFrame(paraphrase_rows)


def _paraphrase_row(
    qid: str, index: int, group: pd.DataFrame, question_mode: str | None
) -> dict[str, Any]:
    mode = modal_answer(group["outcome"])
    n = len(group)
    return {
        "question_id": qid,
        "paraphrase_index": index,
        "n_samples": n,
        "modal_answer": mode.key,
        "modal_share": mode.count / n,
        "question_mode_share": float((group["answer_key"] == question_mode).mean())
        if question_mode
        else 0.0,
        "matches_question_mode": mode.key is not None
        and mode.key == question_mode
        and not mode.tie,
        "parse_failures": int(group["answer_key"].isna().sum()),
    }
