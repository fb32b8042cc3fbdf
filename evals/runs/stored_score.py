"""Rebuild a scored run from its stored rows, for reports: the API, the CLI and the demo."""

from __future__ import annotations

from sqlalchemy.orm import Session

from evals.errors import ConflictError, NotFoundError
from evals.runs.divergence_json import divergence_from_json
from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.result_rows import paraphrases_frame, questions_frame
from evals.scoring import RunInfo, RunScore, compare_runs
from evals.scoring.statistics import Estimate
from plumbline.models import EvalRun


def load_run_score(session: Session, run_id: int, *, team_id: int | None) -> RunScore:
    """The RunScore of a scored run as it was stored (comparison recomputed from the baseline)."""
    run = run_repo.run_by_id(session, run_id, team_id)
    if run is None:
        raise NotFoundError(f"No run {run_id} is visible to this key.", "run")
    if run.summary is None:
        raise ConflictError(
            f"Run {run_id} has not been scored yet (status {run.status}); wait for it to finish "
            f"or resume it with `plumbline eval run --resume {run_id}`.",
            "run",
        )
    results = result_repo.results_of_run(session, run_id)
    questions = questions_frame(results)
    summary = run.summary
    comparison = None
    if run.baseline_run_id is not None:
        baseline = result_repo.results_of_run(session, run.baseline_run_id)
        if baseline:
            comparison = compare_runs(
                questions_frame(baseline), questions, baseline_run_id=str(run.baseline_run_id)
            )
    return RunScore(
        info=run_info(run),
        questions=questions,
        paraphrases=paraphrases_frame(run.paraphrase_scores),
        agreement=Estimate(
            float(summary["agreement"]),
            float(summary["agreement_lower"]),
            float(summary["agreement_upper"]),
            str(summary["interval_method"]),
        ),
        pairwise_agreement=_float(summary.get("pairwise_agreement")),
        all_agree_share=_float(summary.get("all_agree_share")),
        accuracy=summary.get("accuracy"),
        parse_failure_rate=_float(summary.get("parse_failure_rate")),
        n_samples=int(summary["n_samples"]),
        comparison=comparison,
        divergences={
            r.question_key: divergence_from_json(r.divergence) for r in results if r.divergence
        },
    )


def run_info(run: EvalRun) -> RunInfo:
    """The RunInfo of a stored run."""
    suite = run.definition["suite"]
    summary = run.summary or {}
    return RunInfo(
        suite=str(suite["name"]),
        run_id=str(run.id),
        model=run.model,
        threshold=float(summary.get("threshold", suite.get("threshold", 0.9))),
        greedy=bool(summary.get("greedy", False)),
        logprobs_mode=summary.get("logprob_mode"),
        created_at=run.created_at.isoformat() if run.created_at else None,
    )


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else float("nan")
