"""Key a run's answers per question and build the sample frame scoring expects."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pandas as pd

from evals.answers import SemanticAnswer, TextEmbedder, key_answers, outcome_columns
from evals.suite import Suite
from plumbline.models import EvalSample

SCORED_STATUSES = ("done", "rejected")


@dataclass(slots=True)
class KeyedRun:
    """The sample frame, each sample's key (or parse error) and each question's expected key."""

    frame: pd.DataFrame
    keys: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)
    expected_keys: dict[str, str | None] = field(default_factory=dict)
    samples_by_question: dict[str, list[EvalSample]] = field(default_factory=dict)


def context_overflow(error: str | None) -> bool:
    """Whether a rejected sample's error says the prompt did not fit the model's context."""
    text = (error or "").lower()
    return text.startswith("400") and ("context length" in text or "max_model_len" in text)


def key_run(
    suite: Suite,
    question_keys: dict[int, str],
    samples: list[EvalSample],
    *,
    max_model_len: int | None,
    embedder: TextEmbedder | None = None,
) -> KeyedRun:
    """Answer keys per question (cheapest comparison first) and the frame over scored samples.

    A rejected sample (the backend refused the request, e.g. its prompt overflowed the
    context) is kept as a parse failure, so a question that does not fit counts against
    agreement instead of vanishing; an overflow also marks the question's context truncated.
    """
    grouped: dict[str, list[EvalSample]] = defaultdict(list)
    for sample in samples:
        if sample.status in SCORED_STATUSES:
            grouped[question_keys[sample.question_id]].append(sample)
    keyed = KeyedRun(pd.DataFrame(), samples_by_question=dict(grouped))
    rows = []
    for question in suite.questions:
        members = grouped.get(question.id, [])
        if not members:
            continue
        done = [s for s in members if s.status == "done"]
        answers = key_answers(
            question.answer,
            [s.text or "" for s in done],
            expected=question.expected,
            embedder=embedder if isinstance(question.answer, SemanticAnswer) else None,
        )
        keyed.expected_keys[question.id] = answers.expected_key
        keys, errors = outcome_columns(answers.outcomes)
        for sample, key, error in zip(done, keys, errors, strict=True):
            keyed.keys[sample.id] = (key, error)
        for sample in members:
            if sample.status == "rejected":
                keyed.keys[sample.id] = (None, f"request rejected: {sample.error or ''}"[:500])
            key, error = keyed.keys[sample.id]
            rows.append(
                {
                    "question_id": question.id,
                    "paraphrase_index": sample.paraphrase_index,
                    "sample_index": sample.sample_index,
                    "answer_key": key,
                    "parse_error": error,
                    "text": sample.text or "",
                    "finish_reason": sample.finish_reason,
                    "prompt_tokens": sample.prompt_tokens,
                    "completion_tokens": sample.completion_tokens,
                    "max_model_len": max_model_len,
                    "temperature": suite.sampling.temperature,
                    "context_truncated": context_overflow(sample.error),
                    "call_id": sample.call_id,
                }
            )
    keyed.frame = pd.DataFrame(rows)
    return keyed
