"""Score a run from its stored samples and the gateway's call records; store the results."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from evals.answers import MiniLmEmbedder, SemanticAnswer, TextEmbedder
from evals.errors import NotFoundError
from evals.runs.call_records import (
    divergences,
    dominant_mode,
    logprob_modes,
    paraphrase_divergences,
    wait_for_calls,
)
from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.runs.result_rows import json_ready, paraphrase_records, question_rows, questions_frame
from evals.runs.sample_frame import KeyedRun, key_run
from evals.scoring import RunInfo, RunScore, ScoringOptions, score_run
from evals.suite import Suite, suite_from_data
from plumbline.models import EvalRun


def score_and_store(
    sessions: sessionmaker[Session],
    run_id: int,
    *,
    logprob_wait_s: float = 15.0,
    options: ScoringOptions | None = None,
    embedder: TextEmbedder | None = None,
    baseline_run_id: int | None = None,
) -> RunScore | None:
    """Score the run's answered samples, compare with the previous scored run, store it all.

    `baseline_run_id` overrides the comparison baseline (alerting keeps the pre-drop run while
    a regression alert fires). Returns None (and marks the run failed) when no sample has an
    answer to score.
    """
    with sessions() as session:
        run = run_repo.run_by_id(session, run_id, None)
        if run is None:
            raise NotFoundError(f"No run {run_id}.", "run")
        samples = sample_repo.samples_of_run(session, run_id)
        counts = sample_repo.status_counts(session, run_id)
    suite = suite_from_data(run.definition["suite"])
    question_ids: dict[str, int] = run.definition["question_ids"]
    if embedder is None and any(isinstance(q.answer, SemanticAnswer) for q in suite.questions):
        embedder = MiniLmEmbedder()
    keyed = key_run(
        suite,
        {qid: key for key, qid in question_ids.items()},
        samples,
        max_model_len=run.max_model_len,
        embedder=embedder,
    )
    if keyed.frame.empty:
        with sessions.begin() as session:
            run_repo.update_run(
                session,
                run_id,
                status="failed",
                error=f"no sample was answered ({_counts_text(counts)})",
                finished_at=datetime.now(UTC),
            )
        return None
    call_ids = [s.call_id for s in samples if s.status == "done" and s.call_id]
    calls = wait_for_calls(sessions, call_ids, logprob_wait_s)
    modes = logprob_modes(calls.values())
    mode = dominant_mode(modes)
    found = divergences(sessions, keyed, calls, mode)
    per_paraphrase = (
        paraphrase_divergences(sessions, keyed, calls, mode) if _greedy(suite) else None
    )
    with sessions() as session:
        baseline = (
            run_repo.run_by_id(session, baseline_run_id, None)
            if baseline_run_id is not None
            else run_repo.previous_scored_run(session, run.suite_id, run_id)
        )
        baseline_frame = (
            questions_frame(result_repo.results_of_run(session, baseline.id)) if baseline else None
        )
    score = score_run(
        keyed.frame,
        _info(run, suite, mode),
        expected_keys=keyed.expected_keys,
        critical={q.id for q in suite.questions if q.critical},
        divergences=found,
        paraphrase_divergences=per_paraphrase,
        baseline=baseline_frame,
        baseline_run_id=str(baseline.id) if baseline else None,
        options=options or ScoringOptions(),
    )
    extra = {
        "logprob_mode": mode,
        "logprob_modes": modes,
        "max_model_len": run.max_model_len,
        "greedy": _greedy(suite),
        "samples": counts,
        "calls_recorded": len(calls),
        "calls_missing": len(set(call_ids)) - len(calls),
    }
    _store(sessions, run, score, keyed, question_ids, counts, extra)
    return score


def _greedy(suite: Suite) -> bool:
    return suite.greedy or suite.sampling.temperature == 0.0


def _info(run: EvalRun, suite: Suite, mode: str | None) -> RunInfo:
    return RunInfo(
        suite=suite.name,
        run_id=str(run.id),
        model=suite.model,
        threshold=suite.threshold,
        greedy=_greedy(suite),
        logprobs_mode=mode,
        created_at=run.created_at.isoformat() if run.created_at else None,
    )


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{status} {n}" for status, n in sorted(counts.items())) or "no samples"


def _store(
    sessions: sessionmaker[Session],
    run: EvalRun,
    score: RunScore,
    keyed: KeyedRun,
    question_ids: dict[str, int],
    counts: dict[str, int],
    extra: dict[str, Any],
) -> None:
    comparison = score.comparison
    if comparison is not None:
        extra |= {
            "n_paired": comparison.n_paired,
            "only_in_baseline": comparison.only_in_baseline,
            "only_in_current": comparison.only_in_current,
            "modal_changed": comparison.modal_changed,
        }
    unfinished = counts.get("failed", 0) + counts.get("pending", 0) + counts.get("running", 0)
    with sessions.begin() as session:
        result_repo.replace_results(
            session,
            run.id,
            question_rows(
                score.questions,
                run_id=run.id,
                team_id=run.team_id,
                question_ids=question_ids,
                divergences=score.divergences,
            ),
        )
        sample_repo.set_answer_keys(session, keyed.keys)
        run_repo.update_run(
            session,
            run.id,
            status="partial" if unfinished else "completed",
            summary=json_ready(score.summary() | extra),
            paraphrase_scores=paraphrase_records(score.paraphrases),
            baseline_run_id=int(comparison.baseline_run_id)
            if comparison and comparison.baseline_run_id
            else None,
            error=f"{unfinished} samples unanswered; resume the run to retry them"
            if unfinished
            else None,
            finished_at=datetime.now(UTC),
        )
