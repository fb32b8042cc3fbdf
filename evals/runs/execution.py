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
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import Completion, GatewayCallError, GatewayClient
from evals.run_trace import RunTracing
from evals.runs.limits import SampleLimits
from evals.runs.repository import samples as sample_repo
from evals.runs.sample_jobs import SampleJob, load_jobs
from evals.runs.sample_writes import SampleWrites
from evals.transaction import in_thread_transaction

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
    tracing: RunTracing | None = None,
) -> ExecutionReport:
    """Send each unfinished sample through the gateway and store its answer and call id.

    With `tracing`, each call links to its question's span in the run's trace.
    """
    loaded = await in_thread_transaction(sessions, load_jobs, list(sample_ids), tracing)
    report = ExecutionReport()
    for sample_id in loaded.finished + loaded.unknown:
        outcome = SampleOutcome(sample_id, "skipped")
        report.outcomes.append(outcome)
        if on_sample is not None:
            on_sample(outcome)

    held: set[int] = set()
    writes = SampleWrites(sessions, policy.lease_s)

    async def one(job: SampleJob) -> None:
        outcome = await _execute(writes, client, job, limits, policy, held)
        report.outcomes.append(outcome)
        if on_sample is not None:
            on_sample(outcome)

    renewer = None
    if policy.renew_every_s is not None:
        renewer = asyncio.create_task(_renew_claims(sessions, held, policy.renew_every_s))
    calls = [asyncio.ensure_future(one(job)) for job in loaded.jobs]
    try:
        await asyncio.gather(*calls)
    finally:
        # A failure (or a cancellation) ends the execution: no call of it runs on unowned.
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
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
    writes: SampleWrites,
    client: GatewayClient,
    job: SampleJob,
    limits: SampleLimits,
    policy: ExecutionPolicy,
    held: set[int],
) -> SampleOutcome:
    answers: list[Completion | GatewayCallError] = []
    try:
        async with limits.slot(job.suite, job.request.model):
            if not await writes.claim(job.sample_id):
                return SampleOutcome(job.sample_id, "skipped")
            held.add(job.sample_id)
            answers.append(await _call(client, job, policy))
    except Exception:
        # The slot's release failed (Redis away) after the call was answered: store the answer
        # before the batch fails, or the sample is asked again for nothing.
        if answers:
            await writes.finish(_finished(job.sample_id, answers[0])[0])
        raise
    finally:
        held.discard(job.sample_id)
    # Stored once the slot is released: the bound is on calls to the backend, and the next
    # call need not wait for this write.
    row, outcome = _finished(job.sample_id, answers[0])
    await writes.finish(row)
    return outcome


async def _call(
    client: GatewayClient, job: SampleJob, policy: ExecutionPolicy
) -> Completion | GatewayCallError:
    error: GatewayCallError | None = None
    for attempt in range(policy.max_attempts):
        try:
            return await client.chat(job.request)
        except GatewayCallError as failure:
            error = failure
            if not failure.retryable:
                break
            if attempt + 1 < policy.max_attempts:
                await asyncio.sleep(min(policy.backoff_s * 2**attempt, policy.max_backoff_s))
    assert error is not None
    return error


def _finished(
    sample_id: int, answer: Completion | GatewayCallError
) -> tuple[dict[str, Any], SampleOutcome]:
    now = datetime.now(UTC)
    if isinstance(answer, Completion):
        row = {
            "id": sample_id,
            "status": "done",
            "call_id": answer.call_id,
            "text": answer.text,
            "finish_reason": answer.finish_reason,
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "error": None,
            "finished_at": now,
        }
        return row, SampleOutcome(sample_id, "done", answer.call_id)
    status = "failed" if answer.retryable else "rejected"
    row = {
        "id": sample_id,
        "status": status,
        "call_id": answer.call_id,
        "error": str(answer)[:2000],
        "finished_at": now,
    }
    return row, SampleOutcome(sample_id, status, answer.call_id, str(answer))
