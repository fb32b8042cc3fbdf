"""The execution unit: "execute these sample ids" - idempotent, bounded, retrying.

The in-process runner calls it with a run's unfinished ids; a Celery task calls it with a
chunk of ids. A sample already done (or rejected) is skipped, and one held by a live claim of
another worker is left alone, so running the same ids twice never doubles a finished call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import Completion, GatewayCallError, GatewayClient
from evals.repository import samples as sample_repo
from evals.service.limits import SampleLimits
from evals.service.sample_jobs import SampleJob, load_jobs
from evals.service.transaction import in_thread_transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExecutionPolicy:
    """Retries within one execution, and how long a claim keeps other workers away."""

    max_attempts: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    # Longer than max_attempts request timeouts plus backoff, so a live claim is never stolen.
    lease_s: float = 1200.0
    # With renewal, held claims are refreshed this often, so the lease can be short (a dead
    # worker's samples come back within a lease) without stealing a slow, live call.
    renew_every_s: float | None = None


@dataclass(frozen=True, slots=True)
class SampleOutcome:
    """What happened to one sample: done, rejected (4xx), failed (retryable) or skipped."""

    sample_id: int
    status: str
    call_id: str | None = None
    error: str | None = None


@dataclass(slots=True)
class ExecutionReport:
    """Counts of one execution of a set of sample ids."""

    outcomes: list[SampleOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many samples ended with this status."""
        return sum(1 for o in self.outcomes if o.status == status)


async def execute_samples(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    sample_ids: Collection[int],
    *,
    limits: SampleLimits,
    policy: ExecutionPolicy = ExecutionPolicy(),
    on_sample: Callable[[SampleOutcome], None] | None = None,
) -> ExecutionReport:
    """Send each unfinished sample through the gateway and store its answer and call id."""
    loaded = await in_thread_transaction(sessions, load_jobs, list(sample_ids))
    report = ExecutionReport()
    for sample_id in loaded.finished + loaded.unknown:
        outcome = SampleOutcome(sample_id, "skipped")
        report.outcomes.append(outcome)
        if on_sample is not None:
            on_sample(outcome)

    held: set[int] = set()

    async def one(job: SampleJob) -> None:
        async with limits.slot(job.suite, job.request.model):
            outcome = await _execute(sessions, client, job, policy, held)
        report.outcomes.append(outcome)
        if on_sample is not None:
            on_sample(outcome)

    renewer = None
    if policy.renew_every_s is not None:
        renewer = asyncio.create_task(_renew_claims(sessions, held, policy.renew_every_s))
    try:
        await asyncio.gather(*(one(job) for job in loaded.jobs))
    finally:
        if renewer is not None:
            renewer.cancel()
    return report


async def _renew_claims(sessions: sessionmaker[Session], held: set[int], every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        if not held:
            continue
        try:
            now = datetime.now(UTC)
            await in_thread_transaction(sessions, sample_repo.renew_claims, list(held), now)
        except SQLAlchemyError as error:
            # The calls go on; if the database stays away the claims lapse and are re-run.
            log.warning("cannot renew %d sample claims: %s", len(held), error)


async def _execute(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    job: SampleJob,
    policy: ExecutionPolicy,
    held: set[int],
) -> SampleOutcome:
    now = datetime.now(UTC)
    expired = now - timedelta(seconds=policy.lease_s)
    claimed = await in_thread_transaction(sessions, sample_repo.claim, job.sample_id, now, expired)
    if not claimed:
        return SampleOutcome(job.sample_id, "skipped")
    held.add(job.sample_id)
    try:
        return await _call_and_store(sessions, client, job, policy)
    finally:
        held.discard(job.sample_id)


async def _call_and_store(
    sessions: sessionmaker[Session], client: GatewayClient, job: SampleJob, policy: ExecutionPolicy
) -> SampleOutcome:
    error: GatewayCallError | None = None
    for attempt in range(policy.max_attempts):
        try:
            completion = await client.chat(job.request)
        except GatewayCallError as failure:
            error = failure
            if not failure.retryable:
                break
            if attempt + 1 < policy.max_attempts:
                await asyncio.sleep(min(policy.backoff_s * 2**attempt, policy.max_backoff_s))
            continue
        await in_thread_transaction(sessions, _store_answer, job.sample_id, completion)
        return SampleOutcome(job.sample_id, "done", completion.call_id)
    assert error is not None
    status = "failed" if error.retryable else "rejected"
    await in_thread_transaction(sessions, _store_error, job.sample_id, status, error)
    return SampleOutcome(job.sample_id, status, error.call_id, str(error))


def _store_answer(session: Session, sample_id: int, completion: Completion) -> None:
    sample_repo.finish(
        session,
        sample_id,
        status="done",
        call_id=completion.call_id,
        text=completion.text,
        finish_reason=completion.finish_reason,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        error=None,
        finished_at=datetime.now(UTC),
    )


def _store_error(session: Session, sample_id: int, status: str, error: GatewayCallError) -> None:
    sample_repo.finish(
        session,
        sample_id,
        status=status,
        call_id=error.call_id,
        error=str(error)[:2000],
        finished_at=datetime.now(UTC),
    )
