"""DivergenceReport to and from JSON, for the results table and the API."""

from __future__ import annotations

from typing import Any, cast

from evals.divergence import Branch, DivergenceReport, DivergenceVerdict, LogprobsMode


def divergence_to_json(report: DivergenceReport) -> dict[str, Any]:
    """A JSON object holding everything in the report."""
    return {
        "position": report.position,
        "prefix": report.prefix,
        "branches": [
            {
                "token": b.token,
                "probability": b.probability,
                "answers": [[key, count] for key, count in b.answers],
            }
            for b in report.branches
        ],
        "margin": report.margin,
        "near_tie": report.near_tie,
        "verdict": report.verdict.value,
        "logprobs_mode": report.logprobs_mode,
        "modal_answer": report.modal_answer,
        "disagreeing_samples": report.disagreeing_samples,
        "explained_samples": report.explained_samples,
        "explanation": report.explanation(),
    }


def divergence_from_json(data: dict[str, Any]) -> DivergenceReport:
    """The report `divergence_to_json` wrote."""
    return DivergenceReport(
        position=int(data["position"]),
        prefix=str(data["prefix"]),
        branches=tuple(
            Branch(
                token=str(b["token"]),
                probability=None if b["probability"] is None else float(b["probability"]),
                answers=tuple((key, int(count)) for key, count in b["answers"]),
            )
            for b in data["branches"]
        ),
        margin=float(data["margin"]),
        near_tie=bool(data["near_tie"]),
        verdict=DivergenceVerdict(data["verdict"]),
        logprobs_mode=cast(LogprobsMode, data["logprobs_mode"]),
        modal_answer=str(data["modal_answer"]),
        disagreeing_samples=int(data["disagreeing_samples"]),
        explained_samples=int(data["explained_samples"]),
    )
