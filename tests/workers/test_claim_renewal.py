"""Sample claims renewed while a call is in flight: a short lease never steals a live call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from evals.gateway_client import GatewayClient
from evals.runs.creation import create_run
from evals.runs.execution import ExecutionPolicy, execute_samples
from evals.runs.limits import ConcurrencyLimits
from evals.runs.repository import samples as sample_repo
from evals.transaction import in_transaction
from plumbline.models import Call
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.support.recorded_calls import recorded_calls
from tests.workers.suites import STABLE_CAP, import_yaml, scenarios, suite_yaml

pytestmark = pytest.mark.xdist_group("workers_renewal")
LIMITS = ConcurrencyLimits(per_suite=64, per_backend=64)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """A slow backend: each call takes about three seconds, longer than the lease."""
    config = {
        "scenarios": scenarios(STABLE_CAP),
        "timing": {"decode_ms_per_token": 250.0, "prefill_ms_per_token": 0.05},
    }
    with eval_stack("postgres", tmp_path_factory.mktemp("renewal"), config) as running:
        yield running


def two_workers_on_the_same_samples(
    stack: EvalStack, name: str, policy: ExecutionPolicy
) -> list[int]:
    """Worker A starts the run; B gets the same ids once A's claims are older than the lease.

    Returns each sample's claim count: 2 means B claimed (and called) a sample A held.
    """
    suite_id = import_yaml(stack.sessions, suite_yaml(name, samples=1))
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    with stack.sessions() as session:
        ids = sample_repo.unfinished_ids(session, run_id)

    async def worker(delay: float) -> None:
        await asyncio.sleep(delay)
        async with GatewayClient(stack.gateway.url, stack.admin_key) as client:
            await execute_samples(stack.sessions, client, ids, limits=LIMITS, policy=policy)

    async def both() -> None:
        await asyncio.gather(worker(0.0), worker(policy.lease_s * 1.5))

    asyncio.run(both())
    with stack.sessions() as session:
        samples = sample_repo.samples_by_ids(session, ids)
    assert {s.status for s in samples} == {"done"}
    return [s.attempts for s in samples]


def suite_calls(stack: EvalStack, name: str, expected: int) -> int:
    """Calls of the suite once the gateway has written at least `expected` of them."""
    return len(recorded_calls(stack.sessions, Call.feature == f"eval:{name}", at_least=expected))


def test_renewed_claims_keep_a_second_worker_away(stack: EvalStack) -> None:
    renewing = ExecutionPolicy(lease_s=1.5, renew_every_s=0.5)
    assert two_workers_on_the_same_samples(stack, "renewed", renewing) == [1] * 6
    assert suite_calls(stack, "renewed", 6) == 6


def test_without_renewal_a_short_lease_lets_live_calls_be_stolen(stack: EvalStack) -> None:
    lapsing = ExecutionPolicy(lease_s=1.5)
    attempts = two_workers_on_the_same_samples(stack, "lapsed", lapsing)
    # At least one call still in flight was claimed and sent again by the second worker.
    stolen = sum(a - 1 for a in attempts)
    assert stolen >= 1
    assert suite_calls(stack, "lapsed", 6 + stolen) == 6 + stolen
