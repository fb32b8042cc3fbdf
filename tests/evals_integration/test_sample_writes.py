"""Coalesced sample writes: concurrent claims and answers share transactions, claims still skip."""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from evals.runs.creation import create_run
from evals.runs.repository import samples as sample_repo
from evals.runs.sample_writes import SampleWrites
from evals.transaction import in_transaction
from tests.workers.suites import import_yaml, suite_yaml


class CountedSessions:
    """The session factory, counting the transactions begun through it."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.transactions = 0

    def begin(self) -> AbstractContextManager[Session]:
        self.transactions += 1
        return self.sessions.begin()


def run_samples(sessions: sessionmaker[Session], name: str) -> list[int]:
    """A new run of the 2 x 3 x 2 test suite; its 12 sample ids."""
    suite_id = import_yaml(sessions, suite_yaml(name, samples=2))
    run_id = in_transaction(sessions, create_run, suite_id, team_id=None).run_id
    with sessions() as session:
        return sample_repo.unfinished_ids(session, run_id)


def done_row(sample_id: int) -> dict[str, Any]:
    return {
        "id": sample_id,
        "status": "done",
        "text": "12 months",
        "finished_at": datetime.now(UTC),
    }


def test_concurrent_claims_share_a_transaction_and_skip_what_is_held(
    sessions: sessionmaker[Session], name: str
) -> None:
    ids = run_samples(sessions, name)
    counted = CountedSessions(sessions)

    async def scenario() -> tuple[list[bool], list[bool]]:
        writes = SampleWrites(counted, lease_s=60)  # type: ignore[arg-type]
        first = await asyncio.gather(*(writes.claim(i) for i in ids[:8]))
        # Held by a live claim (the first four) or finished (the next two): not claimed again.
        await asyncio.gather(*(writes.finish(done_row(i)) for i in ids[4:6]))
        again = await asyncio.gather(*(writes.claim(i) for i in ids[:10]))
        return first, again

    first, again = asyncio.run(scenario())
    assert first == [True] * 8
    assert again == [False] * 8 + [True] * 2
    # Eight claims, two answers, ten claims: three transactions, not twenty.
    assert counted.transactions == 3
    with sessions() as session:
        samples = {s.id: s for s in sample_repo.samples_by_ids(session, ids)}
    expected = ["running"] * 4 + ["done"] * 2 + ["running"] * 4 + ["pending"] * 2
    assert [samples[i].status for i in ids] == expected
    assert samples[ids[0]].attempts == 1 and samples[ids[8]].attempts == 1


def test_a_claim_whose_lease_ran_out_is_taken_again(
    sessions: sessionmaker[Session], name: str
) -> None:
    ids = run_samples(sessions, name)

    async def scenario() -> tuple[bool, bool]:
        held = await SampleWrites(sessions, lease_s=60).claim(ids[0])
        lapsed = await SampleWrites(sessions, lease_s=0).claim(ids[0])
        return held, lapsed

    assert asyncio.run(scenario()) == (True, True)
    with sessions() as session:
        [sample] = sample_repo.samples_by_ids(session, ids[:1])
    assert sample.attempts == 2
