"""Turn sample rows into ready-to-send gateway requests, using each run's frozen definition."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy.orm import Session

from evals.gateway_client import ChatRequest, eval_feature
from evals.run_trace import RunTracing
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.suite import Suite, render_prompt, suite_from_data
from evals.suites import repository as suite_repo

FINISHED = ("done", "rejected")


@dataclass(frozen=True, slots=True)
class SampleJob:
    """One sample to execute: its id, slot and the request to send."""

    sample_id: int
    run_id: int
    suite: str
    question_key: str
    paraphrase_index: int
    sample_index: int
    request: ChatRequest


@dataclass(frozen=True, slots=True)
class LoadedJobs:
    """Jobs still to do, and the ids that needed nothing (already finished or unknown)."""

    jobs: list[SampleJob]
    finished: list[int]
    unknown: list[int]


def load_jobs(
    session: Session, sample_ids: Collection[int], tracing: RunTracing | None = None
) -> LoadedJobs:
    """Requests for the unfinished samples among `sample_ids`.

    With `tracing`, each request links to its question's span in the run's trace.
    """
    samples = sample_repo.samples_by_ids(session, sample_ids)
    unknown = sorted(set(sample_ids) - {s.id for s in samples})
    runs: dict[int, tuple[Suite, dict[int, str], dict[str, list[str]], str, str | None]] = {}
    jobs, finished = [], []
    for sample in samples:
        if sample.status in FINISHED:
            finished.append(sample.id)
            continue
        if sample.run_id not in runs:
            runs[sample.run_id] = _run_context(session, sample.run_id)
        suite, keys, wordings, team, trace_id = runs[sample.run_id]
        key = keys[sample.question_id]
        question = suite.question(key)
        wording = wordings[key][sample.paraphrase_index]
        sampling = suite.sampling
        request = ChatRequest(
            model=suite.model,
            messages=render_prompt(question, wording).as_openai(),
            feature=eval_feature(suite.name),
            team=team,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            seed=sample.seed,
            trace_link=tracing.link(trace_id, key) if tracing and trace_id else None,
        )
        jobs.append(
            SampleJob(
                sample.id,
                sample.run_id,
                suite.name,
                key,
                sample.paraphrase_index,
                sample.sample_index,
                request,
            )
        )
    return LoadedJobs(jobs, finished, unknown)


def _run_context(
    session: Session, run_id: int
) -> tuple[Suite, dict[int, str], dict[str, list[str]], str, str | None]:
    run = run_repo.run_by_id(session, run_id, None)
    assert run is not None  # samples cascade with their run
    definition = run.definition
    suite = suite_from_data(definition["suite"])
    keys = {int(qid): key for key, qid in definition["question_ids"].items()}
    wordings = {
        key: [str(w["text"]) for w in items] for key, items in definition["wordings"].items()
    }
    return suite, keys, wordings, suite_repo.team_name(session, run.team_id), run.trace_id
