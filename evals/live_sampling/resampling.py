"""Stability of live traffic: re-ask a sampled production request n times, score agreement.

The gateway's log sink stores sampled calls as pending rows (never Celery in the hot path); a
beat task queues them; a worker claims one, re-sends the same request through the gateway at
low priority (feature `resample:<feature>`, so its cost is told apart from the product's), and
stores how many answers agree with the original, parsed as the feature's answer type.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import TypeAdapter
from sqlalchemy.orm import Session

from evals.answers import (
    AnswerSpec,
    MiniLmEmbedder,
    ParsedAnswer,
    SemanticAnswer,
    TextAnswer,
    key_answers,
)
from evals.gateway_client import Completion, GatewayCallError, GatewayClient
from evals.live_sampling import repository as live_repo
from evals.suites import repository as suite_repo

SPEC = TypeAdapter[AnswerSpec](AnswerSpec)
MAX_ATTEMPTS = 3

RESPONSES_PATH = "/v1/responses"


class LeaseLimits(Protocol):
    """A named bound shared by the workers (RedisLimits, ProcessLimits)."""

    def lease(self, kind: str, name: str, limit: int) -> AbstractAsyncContextManager[None]:
        """Hold one of `limit` slots of a bound."""
        ...


@dataclass(frozen=True, slots=True)
class LiveJob:
    """A claimed live sample, ready to re-ask."""

    sample_id: int
    endpoint: str
    body: dict[str, Any]
    feature: str
    team: str
    model: str
    original_text: str
    answer: AnswerSpec
    resamples: int


def queue_pending(session: Session, now: datetime, limit: int) -> list[int]:
    """Mark up to `limit` pending samples queued; the ids to enqueue after commit."""
    return [
        i for i in live_repo.pending_ids(session, limit) if live_repo.mark_queued(session, i, now)
    ]


def claim_job(
    session: Session, sample_id: int, now: datetime, lease_s: float, priority: int
) -> LiveJob | None:
    """Claim a sample and build its job; None if done, held elsewhere or unusable."""
    if not live_repo.claim(session, sample_id, now, now - timedelta(seconds=lease_s)):
        return None
    row = live_repo.sample_by_id(session, sample_id)
    assert row is not None
    if row.request is None or row.original_text is None:
        live_repo.update_sample(session, sample_id, status="failed", error="request not stored")
        return None
    body = dict(row.request)
    if row.priority is not None:
        body["priority"] = priority
    if row.endpoint == RESPONSES_PATH:
        # A resample is a fresh answer, not a response to keep: vLLM never evicts a stored one
        # (and each counts against the team's bound), and a background one would only queue.
        body["store"] = False
        body.pop("background", None)
    spec = SPEC.validate_python(row.answer_spec) if row.answer_spec else TextAnswer()
    return LiveJob(
        sample_id,
        row.endpoint,
        body,
        row.feature,
        suite_repo.team_name(session, row.team_id),
        row.model,
        row.original_text,
        spec,
        row.resamples,
    )


async def resample(
    job: LiveJob, client: GatewayClient, limits: LeaseLimits, concurrency: int
) -> list[Completion | GatewayCallError]:
    """Send the request `job.resamples` times, at most `concurrency` at once across workers."""

    async def one() -> Completion | GatewayCallError:
        async with limits.lease("resample", job.model, concurrency):
            try:
                return await client.complete(
                    job.endpoint, job.body, feature=f"resample:{job.feature}", team=job.team
                )
            except GatewayCallError as error:
                return error

    return list(await asyncio.gather(*(one() for _ in range(job.resamples))))


def store_outcome(
    session: Session, job: LiveJob, answers: Sequence[Completion | GatewayCallError], now: datetime
) -> None:
    """Store the agreement of the answered resamples with the original answer."""
    texts = [a.text for a in answers if isinstance(a, Completion)]
    row = live_repo.sample_by_id(session, job.sample_id)
    assert row is not None
    call_ids = [a.call_id for a in answers]
    if not texts:
        failed: dict[str, Any] = {
            "status": "pending" if row.attempts < MAX_ATTEMPTS else "failed",
            "error": "; ".join(str(a) for a in answers)[:2000],
            "call_ids": call_ids,
        }
        if failed["status"] == "failed" and not row.keep_texts:
            failed |= {"request": None, "original_text": None}
        live_repo.update_sample(session, job.sample_id, **failed)
        return
    embedder = MiniLmEmbedder() if isinstance(job.answer, SemanticAnswer) else None
    keyed = key_answers(job.answer, [job.original_text, *texts], embedder=embedder)
    keys = [o.key if isinstance(o, ParsedAnswer) else None for o in keyed.outcomes]
    original, resampled = keys[0], keys[1:]
    agreeing = sum(1 for k in resampled if original is not None and k == original)
    values: dict[str, Any] = {
        "status": "done",
        "finished_at": now,
        "original_key": original,
        "answer_keys": resampled,
        "call_ids": call_ids,
        "n_answered": len(texts),
        "n_agreeing": agreeing,
        "agreement": agreeing / len(texts) if original is not None else None,
        "error": None if original is not None else "the original answer did not parse",
    }
    if not row.keep_texts:
        values |= {"request": None, "original_text": None}
    live_repo.update_sample(session, job.sample_id, **values)
