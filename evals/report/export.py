"""CSV and Parquet exports of a scored run, and reading them back with the same column types."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import pandas as pd

from evals.report.csv_cells import escaped_frame, unescaped_frame
from evals.scoring import RunScore
from evals.scoring.schema import PARAPHRASE_DTYPES, QUESTION_DTYPES, conform

ExportFormat = Literal["csv", "parquet"]
TABLES = ("questions", "paraphrases", "run")


def run_tables(score: RunScore) -> dict[str, pd.DataFrame]:
    """The three tables of a run: questions, paraphrases and the one-row run summary."""
    return {
        "questions": score.questions,
        "paraphrases": score.paraphrases,
        "run": pd.DataFrame([score.summary()]),
    }


def export_run(
    score: RunScore, directory: Path, formats: Iterable[ExportFormat] = ("csv", "parquet")
) -> list[Path]:
    """Write every table in every format to `directory`; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in run_tables(score).items():
        for fmt in formats:
            path = directory / f"{name}.{fmt}"
            if fmt == "csv":
                escaped_frame(frame).to_csv(path, index=False)
            else:
                frame.to_parquet(path, index=False)
            written.append(path)
    return written


def read_table(path: Path) -> pd.DataFrame:
    """Read an exported questions or paraphrases table back with its schema's types."""
    dtypes = {"questions": QUESTION_DTYPES, "paraphrases": PARAPHRASE_DTYPES}.get(path.stem)
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
    else:
        frame = pd.read_csv(
            path,
            dtype={k: v for k, v in (dtypes or {}).items() if v == "string"},
            keep_default_na=False,
            na_values=[""],
        )
        frame = unescaped_frame(frame)
    return conform(frame, dtypes) if dtypes else frame
