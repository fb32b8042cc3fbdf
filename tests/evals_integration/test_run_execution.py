"""Runs against the simulator's scripted answers through a real gateway, on Postgres and SQLite.

The truth is known: the cap question is scripted at 46/41/13 ("12 months" / "24 months" /
"There is no cap."), the law question at 99/1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pandas as pd
import pytest
from sqlalchemy import select

from evals.gateway_client import GatewayClient
from evals.paraphrases.generation import generate_paraphrases
from evals.paraphrases.review import list_paraphrases, review_paraphrases
from evals.runs.creation import create_run
from evals.runs.execution import execute_samples
from evals.runs.limits import ConcurrencyLimits
from evals.runs.repository import samples as sample_repo
from evals.runs.runner import RunnerOptions, RunOutcome, execute_run
from evals.runs.stored_score import load_run_score
from evals.scoring import RunScore
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.models import Call, EvalSample, Team
from tests.evals_integration.scripted import scenarios, suite_yaml
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.support.recorded_calls import recorded_calls

pytestmark = pytest.mark.xdist_group("evals_stack")
OPTIONS = RunnerOptions(ConcurrencyLimits(per_suite=8, per_backend=16), logprob_wait_s=15.0)


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EvalStack]:
    """Simulator with the scripted scenarios, gateway and database, for the whole module."""
    with eval_stack(
        request.param, tmp_path_factory.mktemp("stack"), {"scenarios": scenarios()}
    ) as running:
        yield running


def client(stack: EvalStack) -> GatewayClient:
    return GatewayClient(stack.gateway.url, stack.admin_key)


def prepared_suite(stack: EvalStack, name: str, samples: int = 10) -> int:
    """Import the suite, generate paraphrases through the gateway and approve them all."""
    done = in_transaction(
        stack.sessions, import_suite, parse_suite(suite_yaml(name, "legal", samples))
    )

    async def generate() -> None:
        async with client(stack) as gateway:
            outcomes = await generate_paraphrases(
                stack.sessions, gateway, done.suite_id, team_id=None, n=5
            )
        assert all(o.error is None for o in outcomes), outcomes

    asyncio.run(generate())
    pending = in_transaction(
        stack.sessions, list_paraphrases, done.suite_id, team_id=None, status="pending"
    )
    in_transaction(
        stack.sessions, review_paraphrases, [p.id for p in pending], "approved", team_id=None
    )
    return done.suite_id


def run(stack: EvalStack, run_id: int, *, resume: bool = False) -> RunOutcome:
    async def work() -> RunOutcome:
        async with client(stack) as gateway:
            return await execute_run(stack.sessions, gateway, run_id, OPTIONS, resume=resume)

    return asyncio.run(work())


def new_run(stack: EvalStack, suite_id: int) -> int:
    return in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id


def eval_calls(stack: EvalStack, name: str, at_least: int = 0) -> int:
    """Calls of the suite once the gateway has written at least `at_least` of them."""
    return len(recorded_calls(stack.sessions, Call.feature == f"eval:{name}", at_least=at_least))


@pytest.fixture(scope="module")
def scored(stack: EvalStack) -> tuple[str, int, RunScore]:
    """One completed run of the contracts suite, shared by the assertions below."""
    suite_id = prepared_suite(stack, "contracts")
    run_id = new_run(stack, suite_id)
    outcome = run(stack, run_id)
    assert (outcome.status, outcome.samples) == ("completed", {"done": 80})
    assert outcome.score is not None
    return "contracts", run_id, outcome.score


def test_paraphrases_generated_through_the_gateway_are_checked_and_deduplicated(
    stack: EvalStack, scored: tuple[str, int, RunScore]
) -> None:
    with stack.sessions() as session:
        listed = list_paraphrases(session, 1, team_id=None)
        generators = session.scalars(
            select(Call.feature).where(Call.feature == "eval:contracts:paraphrases")
        ).all()
    cap = [p.text for p in listed if p.question_key == "cap"]
    # The canonical reworded only in case, and the one that drops "9.2", were refused.
    assert cap == [
        "Under clause 9.2, how many months of fees is the indemnity capped at?",
        "How many months of fees does clause 9.2 set as the indemnity cap?",
        "What indemnity cap, in months, does clause 9.2 give?",
    ]
    assert all(p.generator_call_id for p in listed if p.source == "generated")
    assert len(generators) == 2


def test_near_tie_question_is_unstable_with_the_right_divergent_token(
    scored: tuple[str, int, RunScore],
) -> None:
    _, _, score = scored
    cap = score.questions.set_index("question_id").loc["cap"]
    assert cap["n_samples"] == 40 and cap["n_paraphrases"] == 4
    assert cap["agreement_upper"] < 0.9  # unstable: even the best case misses the threshold
    assert 0.25 <= cap["agreement"] <= 0.65
    assert cap["expected_answer"] == "12 month"
    report = score.divergences["cap"]
    assert report.prefix == "The indemnity cap is"
    assert [b.token for b in report.branches[:2]] == [" 12", " 24"]
    first, second = report.top_probabilities
    assert first == pytest.approx(0.46, abs=0.005)
    assert second == pytest.approx(0.41, abs=0.005)
    assert report.near_tie and report.logprobs_mode == "raw_logprobs"
    assert '" 12" p=0.46 vs " 24" p=0.41 (near tie)' in report.explanation()


def test_clear_winner_question_is_stable(scored: tuple[str, int, RunScore]) -> None:
    _, _, score = scored
    law = score.questions.set_index("question_id").loc["law"]
    assert law["modal_answer"] == "english"
    assert law["agreement"] >= 0.95
    assert law["agreement_upper"] >= 0.9
    assert law["paraphrases_breaking"] == 0


def test_every_sample_is_a_recorded_gateway_call_of_the_suite_team(
    stack: EvalStack, scored: tuple[str, int, RunScore]
) -> None:
    name, run_id, score = scored
    with stack.sessions() as session:
        samples = sample_repo.samples_of_run(session, run_id)
        calls = {
            c.id: c for c in session.scalars(select(Call).where(Call.feature == f"eval:{name}"))
        }
        legal = session.scalar(select(Team.id).where(Team.name == "legal"))
    assert sorted(s.call_id or "" for s in samples) == sorted(calls)
    assert {(c.source, c.team_id, c.logprob_mode, c.status_code) for c in calls.values()} == {
        ("eval", legal, "raw_logprobs", 200)
    }
    by_call = {s.call_id: s for s in samples}
    assert all(calls[i].completion_tokens == by_call[i].completion_tokens for i in calls)
    assert score.info.logprobs_mode == "raw_logprobs"
    assert all(s.answer_key or s.parse_error for s in samples)


def test_stored_run_rebuilds_to_the_same_score(
    stack: EvalStack, scored: tuple[str, int, RunScore]
) -> None:
    _, run_id, score = scored
    with stack.sessions() as session:
        loaded = load_run_score(session, run_id, team_id=None)
    pd.testing.assert_frame_equal(loaded.questions, score.questions)
    pd.testing.assert_frame_equal(loaded.paraphrases, score.paraphrases)
    assert loaded.agreement == score.agreement
    assert loaded.divergences == score.divergences
    assert loaded.summary() == pytest.approx(score.summary(), nan_ok=True)


def test_a_second_run_is_compared_with_the_first(
    stack: EvalStack, scored: tuple[str, int, RunScore]
) -> None:
    _, first_id, _ = scored
    second = run(stack, new_run(stack, 1))
    assert second.score is not None and second.score.comparison is not None
    comparison = second.score.comparison
    assert comparison.baseline_run_id == str(first_id)
    assert comparison.n_paired == 2
    assert comparison.verdict.value in {
        "no_change",
        "insufficient_data",
        "negligible",
        "rise",
        "drop",
    }
    with stack.sessions() as session:
        loaded = load_run_score(session, int(second.score.info.run_id), team_id=None)
    assert loaded.comparison is not None and loaded.comparison.delta == comparison.delta


def test_resume_after_a_crash_sends_only_unfinished_samples(stack: EvalStack) -> None:
    name = "resumable"
    run_id = new_run(stack, prepared_suite(stack, name, samples=3))
    with stack.sessions() as session:
        ids = sample_repo.unfinished_ids(session, run_id)
    half = ids[: len(ids) // 2]

    async def first_worker() -> None:
        async with client(stack) as gateway:
            await execute_samples(stack.sessions, gateway, half, limits=OPTIONS.limits)

    asyncio.run(first_worker())
    with stack.sessions.begin() as session:
        # A worker that died mid-call leaves its sample claimed ("running") with no answer.
        session.get(EvalSample, ids[-1]).status = "running"  # type: ignore[union-attr]
        session.get(EvalSample, ids[-1]).claimed_at = datetime.now(UTC)  # type: ignore[union-attr]
    with stack.sessions() as session:
        before = {s.id: s.call_id for s in sample_repo.samples_by_ids(session, half)}
    outcome = run(stack, run_id, resume=True)
    assert (outcome.status, outcome.samples) == ("completed", {"done": len(ids)})
    with stack.sessions() as session:
        after = {s.id: s.call_id for s in sample_repo.samples_by_ids(session, half)}
    assert after == before
    assert eval_calls(stack, name, at_least=len(ids)) == len(ids)


def test_executing_finished_samples_again_sends_nothing(
    stack: EvalStack, scored: tuple[str, int, RunScore]
) -> None:
    name, run_id, _ = scored
    with stack.sessions() as session:
        ids = [s.id for s in sample_repo.samples_of_run(session, run_id)]
    calls_before = eval_calls(stack, name, at_least=len(ids))

    async def again() -> list[str]:
        async with client(stack) as gateway:
            report = await execute_samples(stack.sessions, gateway, ids, limits=OPTIONS.limits)
        return [o.status for o in report.outcomes]

    assert set(asyncio.run(again())) == {"skipped"}
    assert eval_calls(stack, name) == calls_before
