"""Scoring a resampled live call: agreement with the original, failures retried then dropped."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import Completion, GatewayCallError
from evals.live_sampling.resampling import LiveJob, claim_job, queue_pending, store_outcome
from evals.transaction import in_transaction
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import LiveSample
from plumbline.repositories.teams import add_team
from tests.support.databases import sqlite_database


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        factory = make_session_factory(engine)
        in_transaction(factory, add_team, "legal")
        yield factory
        engine.dispose()


def sampled(sessions: sessionmaker[Session], text: str, **fields: Any) -> int:
    defaults: dict[str, Any] = {
        "endpoint": "/v1/chat/completions",
        "request": {"model": "tiny", "messages": [{"role": "user", "content": "price?"}]},
    }
    row = LiveSample(
        call_id=f"c-{text[:8]}-{len(fields)}",
        created_at=datetime.now(UTC),
        team_id=1,
        feature="pricing",
        model="tiny",
        original_text=text,
        resamples=3,
        priority=1,
        status="pending",
        attempts=0,
        **{**defaults, **fields},
    )
    with sessions.begin() as session:
        session.add(row)
        session.flush()
        return row.id


def answer(text: str) -> Completion:
    return Completion(text, "call", "stop", 5, 5)


def claim(sessions: sessionmaker[Session], sample_id: int) -> LiveJob:
    now = datetime.now(UTC)
    assert in_transaction(sessions, queue_pending, now, 10) == [sample_id]
    job = in_transaction(sessions, claim_job, sample_id, now, 60.0, 10)
    assert job is not None
    return job


def stored(sessions: sessionmaker[Session], sample_id: int) -> LiveSample:
    with sessions() as session:
        row = session.get(LiveSample, sample_id)
    assert row is not None
    return row


def test_agreement_counts_answered_resamples_parsed_like_the_original(
    sessions: sessionmaker[Session],
) -> None:
    sample_id = sampled(sessions, "It costs $12.", answer_spec={"type": "number"})
    job = claim(sessions, sample_id)
    assert job.body["priority"] == 10 and job.team == "legal"
    answers = [answer("12 dollars"), answer("The price is 24 dollars."), GatewayCallError(503, "x")]
    in_transaction(sessions, store_outcome, job, answers, datetime.now(UTC))
    row = stored(sessions, sample_id)
    assert (row.status, row.n_answered, row.n_agreeing, row.agreement) == ("done", 2, 1, 0.5)
    assert row.original_key == "12 USD" and row.answer_keys == ["12 USD", "24 USD"]
    assert row.request is None and row.original_text is None  # the team keeps no bodies


def test_an_unparseable_original_has_no_agreement(sessions: sessionmaker[Session]) -> None:
    sample_id = sampled(sessions, "I cannot say.", answer_spec={"type": "number"}, keep_texts=True)
    job = claim(sessions, sample_id)
    in_transaction(sessions, store_outcome, job, [answer("12")] * 3, datetime.now(UTC))
    row = stored(sessions, sample_id)
    assert (row.status, row.agreement) == ("done", None)
    assert row.error == "the original answer did not parse" and row.request is not None


def test_no_answer_at_all_is_retried_then_given_up(sessions: sessionmaker[Session]) -> None:
    sample_id = sampled(sessions, "It costs 12 dollars.")
    down = [GatewayCallError(None, "ConnectError")] * 3
    for attempt in range(3):
        job = claim(sessions, sample_id)
        in_transaction(sessions, store_outcome, job, down, datetime.now(UTC))
        row = stored(sessions, sample_id)
        assert row.attempts == attempt + 1
        assert row.status == ("pending" if attempt < 2 else "failed")
    assert row.request is None and "ConnectError" in (row.error or "")


def test_a_responses_resample_stores_nothing_and_never_runs_in_the_background(
    sessions: sessionmaker[Session],
) -> None:
    request = {"model": "tiny", "input": "price?", "store": True, "background": True}
    sample_id = sampled(sessions, "12 months", endpoint="/v1/responses", request=request)
    job = claim(sessions, sample_id)
    assert job.body == {"model": "tiny", "input": "price?", "store": False, "priority": 10}
