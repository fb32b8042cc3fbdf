"""Run a suite in process: create or resume a run, execute its samples, score and store it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.clients import delivery_clients
from evals.alerts.delivery import deliver
from evals.gateway_client import GatewayCallError, GatewayClient
from evals.run_trace import RunTracing
from evals.runs.execution import ExecutionPolicy, SampleOutcome, execute_samples
from evals.runs.finalization import finalize_run
from evals.runs.limits import SampleLimits
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.runs.start import begin_run, record_max_model_len
from evals.runs.trace_export import export_run_trace
from evals.scoring import RunScore
from evals.transaction import in_thread_transaction
from plumbline.models import EvalRun
from plumbline.settings import NotifySettings

log = logging.getLogger(__name__)


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
    notify: NotifySettings = field(default_factory=NotifySettings)
    finalize_lease_s: float = 300.0
    # Where the run's trace goes (None: not traced); the same as a worker's.
    tracing: RunTracing | None = None


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
            sessions,
            client,
            ids,
            limits=options.limits,
            policy=options.policy,
            on_sample=on_sample,
            tracing=options.tracing,
        )
        finalized = await asyncio.to_thread(
            finalize_run,
            sessions,
            run_id,
            notify=options.notify,
            lease_s=options.finalize_lease_s,
            logprob_wait_s=options.logprob_wait_s,
        )
    except BaseException as error:
        await asyncio.shield(in_thread_transaction(sessions, _fail, run_id, error))
        raise
    # The same exactly-once scoring and alert decision as a worker's; a first delivery attempt
    # is made here, and a worker's sweeper retries what failed.
    await asyncio.to_thread(_deliver_once, sessions, finalized.notification_ids, options.notify)
    if finalized.claimed:
        await asyncio.to_thread(export_run_trace, sessions, run_id, options.tracing)
    return await in_thread_transaction(sessions, _outcome, run_id, finalized.score)


def _deliver_once(
    sessions: sessionmaker[Session], notification_ids: tuple[int, ...], notify: NotifySettings
) -> None:
    if not notification_ids:
        return
    clients = delivery_clients(notify)
    try:
        for notification_id in notification_ids:
            deliver(sessions, notification_id, notify, clients)
    finally:
        clients.close()


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
