"""A backend that returns no logprobs (like a hosted provider): self-consistency alone."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pandas as pd
import pytest
from sqlalchemy import select

from evals.gateway_client import GatewayClient
from evals.runs.creation import create_run
from evals.runs.limits import ConcurrencyLimits
from evals.runs.runner import RunnerOptions, RunOutcome, execute_run
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.models import Call, CallLogprobs
from tests.evals_integration.scripted import scenarios, suite_yaml
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.support.recorded_calls import recorded_calls

pytestmark = pytest.mark.xdist_group("evals_no_logprobs")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """The scripted simulator behind a gateway that captures no logprobs."""
    with eval_stack(
        "sqlite",
        tmp_path_factory.mktemp("nolp"),
        {"scenarios": scenarios()},
        model_overrides={"logprobs": {"mode": "off"}},
    ) as running:
        yield running


def test_run_scores_by_self_consistency_and_says_there_were_no_logprobs(
    stack: EvalStack,
) -> None:
    done = in_transaction(
        stack.sessions, import_suite, parse_suite(suite_yaml("hosted", "legal", 8))
    )
    run_id = in_transaction(stack.sessions, create_run, done.suite_id, team_id=None).run_id

    async def work() -> RunOutcome:
        async with GatewayClient(stack.gateway.url, stack.admin_key) as gateway:
            options = RunnerOptions(ConcurrencyLimits(4, 8), logprob_wait_s=10)
            return await execute_run(stack.sessions, gateway, run_id, options)

    outcome = asyncio.run(work())
    assert outcome.status == "completed" and outcome.score is not None
    score = outcome.score
    assert score.info.logprobs_mode is None and score.divergences == {}
    cap = score.questions.set_index("question_id").loc["cap"]
    assert cap["agreement_upper"] < 0.9 and pd_missing(cap["divergence_verdict"])
    with stack.sessions() as session:
        logged = session.scalars(select(CallLogprobs)).all()
    calls = recorded_calls(stack.sessions, Call.feature == "eval:hosted", at_least=24)
    # cap: the canonical wording only; law: the canonical plus one written in the suite.
    assert len(calls) == 24 and {c.logprob_mode for c in calls} == {None}
    assert logged == []
    with stack.sessions() as session:
        summary = session.get_one(
            __import__("plumbline.models", fromlist=["EvalRun"]).EvalRun, run_id
        ).summary
    assert summary is not None and summary["logprob_modes"] == {"none": 24}


def pd_missing(value: object) -> bool:
    """True for pandas' missing values."""
    return bool(pd.isna(value))
