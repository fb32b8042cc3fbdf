"""Run a suite in process: create or resume a run, execute its samples, score and store it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import GatewayCallError, GatewayClient
from evals.repository import runs as run_repo
from evals.repository import samples as sample_repo
from evals.scoring import RunScore
from evals.service.errors import ConflictError, NotFoundError
from evals.service.execution import ExecutionPolicy, SampleOutcome, execute_samples
from evals.service.limits import SampleLimits
from evals.service.run_scoring import score_and_store
from evals.service.transaction import in_thread_transaction
from plumbline.models import EvalRun

log = logging.getLogger(__name__)
ACTIVE = ("pending", "running")


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended, its sample counts and its score (None when nothing could be scored)."""

    run_id: int
    status: str
    samples: dict[str, int]
    score: RunScore | None


@dataclass(frozen=True, slots=True)
class RunnerOptions:
    """Everything besides the run that shapes its execution."""

    limits: SampleLimits
    policy: ExecutionPolicy = field(default_factory=ExecutionPolicy)
    logprob_wait_s: float = 15.0


async def execute_run(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    run_id: int,
    options: RunnerOptions,
    *,
    resume: bool = False,
    on_sample: Callable[[SampleOutcome], None] | None = None,
) -> RunOutcome:
    """Execute a run's unfinished samples, then score it; `resume` reclaims abandoned samples.

    Only what is not finished is sent, so a run interrupted by a crash resumes where it
    stopped: finished samples keep their answers and call ids.
    """
    ids = await in_thread_transaction(sessions, begin_run, run_id, resume=resume)
    try:
        models = await client.max_model_lens()
    except GatewayCallError as error:
        log.warning("run %s: cannot read max_model_len from the gateway: %s", run_id, error)
        models = {}
    await in_thread_transaction(sessions, record_max_model_len, run_id, models)
    try:
        await execute_samples(
            sessions, client, ids, limits=options.limits, policy=options.policy, on_sample=on_sample
        )
        score = await asyncio.to_thread(
            score_and_store, sessions, run_id, logprob_wait_s=options.logprob_wait_s
        )
    except BaseException as error:
        await asyncio.shield(in_thread_transaction(sessions, _fail, run_id, error))
        raise
    return await in_thread_transaction(sessions, _outcome, run_id, score)


def begin_run(session: Session, run_id: int, *, resume: bool = False) -> list[int]:
    """Mark the run running and return its unfinished sample ids (the work to fan out).

    `resume` first releases samples claimed by a worker that died, and allows a run that
    already ended (failed or partial) to go again.
    """
    run = run_repo.run_by_id(session, run_id, None)
    if run is None:
        raise NotFoundError(f"No run {run_id}.", "run")
    if run.status not in ACTIVE and not resume:
        raise ConflictError(
            f"Run {run_id} is {run.status}; resume it (`plumbline eval run --resume {run_id}`) "
            "to retry its unanswered samples.",
            "run",
        )
    if resume:
        sample_repo.release_running(session, run_id)
    values: dict[str, object] = {"status": "running", "error": None, "finished_at": None}
    if run.started_at is None:
        values["started_at"] = datetime.now(UTC)
    run_repo.update_run(session, run_id, **values)
    return sample_repo.unfinished_ids(session, run_id)


def record_max_model_len(session: Session, run_id: int, models: dict[str, int | None]) -> None:
    """Store the served context size of the run's model (from the gateway's /v1/models)."""
    run = run_repo.run_by_id(session, run_id, None)
    assert run is not None
    length = models.get(run.model)
    if length is not None:
        run.max_model_len = length


def _fail(session: Session, run_id: int, error: BaseException) -> None:
    reason = "interrupted" if isinstance(error, asyncio.CancelledError) else repr(error)
    run_repo.update_run(
        session,
        run_id,
        status="failed",
        error=f"{reason[:1500]}; resume with `plumbline eval run --resume {run_id}`",
        finished_at=datetime.now(UTC),
    )


def _outcome(session: Session, run_id: int, score: RunScore | None) -> RunOutcome:
    run: EvalRun | None = run_repo.run_by_id(session, run_id, None)
    assert run is not None
    return RunOutcome(run_id, run.status, sample_repo.status_counts(session, run_id), score)
