"""Per-question and per-paraphrase scores of one run's sample frame."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evals.scoring.context import context_table
from evals.scoring.samples import FAILURE_PREFIX, outcome_labels
from evals.scoring.statistics import (
    cluster_entropy,
    normalised_entropy,
    pairwise_agreement,
    wilson_interval,
)


@dataclass(frozen=True, slots=True)
class ModalAnswer:
    """The most common parsed answer of a group of samples and how many gave it."""

    key: str | None
    count: int
    tie: bool


def modal_answer(outcomes: Counter[str]) -> ModalAnswer:
    """Largest cluster among parsed answers (ties broken by key); failures are singletons."""
    parsed = {k: n for k, n in outcomes.items() if not k.startswith(FAILURE_PREFIX)}
    if not parsed:
        return ModalAnswer(None, 1 if outcomes else 0, False)
    top = max(parsed.values())
    leaders = sorted(k for k, n in parsed.items() if n == top)
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
    outcomes = outcome_labels(frame).tolist()
    keys: list[str | None] = frame["answer_key"].tolist()
    rows_of: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (qid, paraphrase) in enumerate(
        zip(frame["question_id"], frame["paraphrase_index"], strict=True)
    ):
        rows_of[str(qid)][int(paraphrase)].append(i)
    context = context_table(frame, context_fraction)
    question_rows: list[dict[str, Any]] = []
    paraphrase_rows: list[dict[str, Any]] = []
    for qid in sorted(rows_of):
        rows = [i for group in rows_of[qid].values() for i in group]
        counts = Counter(outcomes[i] for i in rows)
        mode = modal_answer(counts)
        paraphrases = [
            _paraphrase_row(
                qid, p, [outcomes[i] for i in group], [keys[i] for i in group], mode.key
            )
            for p, group in sorted(rows_of[qid].items())
        ]
        paraphrase_rows.extend(paraphrases)
        own_keys = [keys[i] for i in rows]
        expected = (expected_keys or {}).get(qid)
        accuracy = sum(k == expected for k in own_keys) / len(own_keys) if expected else math.nan
        question_rows.append(
            _question_row(qid, counts, mode, own_keys, paraphrases, confidence)
            | {"expected_answer": expected, "accuracy": accuracy, "critical": qid in critical}
            | context[qid]
        )
    return pd.DataFrame(question_rows), pd.DataFrame(paraphrase_rows)


def _question_row(
    qid: str,
    counts: Counter[str],
    mode: ModalAnswer,
    keys: Sequence[str | None],
    paraphrases: list[dict[str, Any]],
    confidence: float,
) -> dict[str, Any]:
    n = len(keys)
    sizes = list(counts.values())
    interval = wilson_interval(mode.count, n, confidence)
    failures = sum(k is None for k in keys)
    worst = min(paraphrases, key=lambda p: (p["question_mode_share"], p["paraphrase_index"]))
    return {
        "question_id": qid,
        "n_samples": n,
        "n_paraphrases": len(paraphrases),
        "n_answers": len(sizes),
        "modal_answer": mode.key,
        "modal_count": mode.count,
        "agreement": interval.point,
        "agreement_lower": interval.lower,
        "agreement_upper": interval.upper,
        "modal_tie": mode.tie,
        "pairwise_agreement": pairwise_agreement(sizes),
        "entropy": cluster_entropy(sizes),
        "entropy_normalised": normalised_entropy(sizes),
        "parse_failures": failures,
        "parse_failure_rate": failures / n,
        "paraphrases_breaking": sum(not p["matches_question_mode"] for p in paraphrases),
        "worst_paraphrase": worst["paraphrase_index"],
        "worst_paraphrase_share": worst["question_mode_share"],
    }


def _paraphrase_row(
    qid: str, index: int, outcomes: list[str], keys: list[str | None], question_mode: str | None
) -> dict[str, Any]:
    mode = modal_answer(Counter(outcomes))
    n = len(outcomes)
    matching = sum(k == question_mode for k in keys) if question_mode else 0
    return {
        "question_id": qid,
        "paraphrase_index": index,
        "n_samples": n,
        "modal_answer": mode.key,
        "modal_share": mode.count / n,
        "question_mode_share": matching / n,
        "matches_question_mode": mode.key is not None
        and mode.key == question_mode
        and not mode.tie,
        "parse_failures": sum(k is None for k in keys),
    }
