"""The scored question table as database rows and back, with the scoring schema's dtypes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from evals.divergence import DivergenceReport
from evals.runs.divergence_json import divergence_to_json
from evals.scoring.schema import PARAPHRASE_DTYPES, QUESTION_DTYPES, conform
from plumbline.models import EvalQuestionResult


def plain(value: Any) -> Any:
    """A JSON- and database-ready scalar: NaN and pandas NA become None, numpy becomes Python."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return plain(value.item())
    return value


def json_ready(value: Any) -> Any:
    """A copy of nested dicts and lists with every scalar made `plain` (JSONB refuses NaN)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return plain(value)


def question_rows(
    questions: pd.DataFrame,
    *,
    run_id: int,
    team_id: int,
    question_ids: Mapping[str, int],
    divergences: Mapping[str, DivergenceReport],
) -> list[dict[str, Any]]:
    """Rows of `eval_question_results` for a run's question table."""
    rows = []
    for record in questions.to_dict("records"):
        key = str(record.pop("question_id"))
        report = divergences.get(key)
        rows.append(
            {name: plain(value) for name, value in record.items()}
            | {
                "run_id": run_id,
                "team_id": team_id,
                "question_id": question_ids.get(key),
                "question_key": key,
                "divergence": divergence_to_json(report) if report else None,
            }
        )
    return rows


def questions_frame(results: list[EvalQuestionResult]) -> pd.DataFrame:
    """The question table of a scored run rebuilt from its rows (a baseline for the next run)."""
    records = [
        {"question_id": r.question_key}
        | {name: getattr(r, name) for name in QUESTION_DTYPES if name != "question_id"}
        for r in results
    ]
    frame = pd.DataFrame(records, columns=list(QUESTION_DTYPES))
    return conform(frame, QUESTION_DTYPES)


def paraphrase_records(paraphrases: pd.DataFrame) -> list[dict[str, Any]]:
    """The paraphrase table as JSON records."""
    return [
        {str(name): plain(value) for name, value in record.items()}
        for record in paraphrases.to_dict("records")
    ]


def paraphrases_frame(records: list[dict[str, Any]] | None) -> pd.DataFrame:
    """The paraphrase table rebuilt from its JSON records."""
    frame = pd.DataFrame(records or [], columns=list(PARAPHRASE_DTYPES))
    return conform(frame, PARAPHRASE_DTYPES)
