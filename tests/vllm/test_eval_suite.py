"""A small eval suite end to end on the real vLLM (CPU, tiny random-weight model) via the gateway.

The tiny model writes gibberish, so the suite reads answers as regex captures and normalised
text; what is checked is the plumbing: every sample a recorded gateway call with real logprobs,
max_model_len read through the gateway, divergence read from those logprobs, temperature 0.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import GatewayClient
from evals.runs.creation import create_run
from evals.runs.limits import ConcurrencyLimits
from evals.runs.runner import RunnerOptions, RunOutcome, execute_run
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call, CallLogprobs, EvalRun
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.recorded_calls import recorded_calls

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]
MAX_MODEL_LEN = 512  # scripts/vllm-server --max-model-len
SUITE = """\
name: {name}
team: legal
model: tiny
greedy: {greedy}
sampling: {{temperature: {temperature}, max_tokens: 8, seed_policy: per_sample, seed: 5}}
paraphrases_per_question: 2
samples_per_paraphrase: 3
questions:
  - id: capital
    text: What is the capital of France?
    answer: {{type: regex, pattern: '(\\S+)'}}
    paraphrases:
      - Which city is the capital of France?
  - id: days
    text: How many days are in a week?
    context: A week has seven days.
    answer: {{type: text}}
    paraphrases:
      - A week has how many days?
"""


@dataclass(frozen=True)
class VllmStack:
    """A gateway in front of the real vLLM, its database sessions and an admin key."""

    gateway: GatewayProcess
    sessions: sessionmaker[Session]
    admin_key: str


@pytest.fixture(scope="module")
def stack(vllm_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmStack]:
    """A gateway in front of the real vLLM, on a SQLite database."""
    with sqlite_database(tmp_path_factory.mktemp("vllm-evals")) as url:
        admin = issue_key(url, "ops", admin=True)
        gateway = GatewayProcess(gateway_config(vllm_server), url)
        with gateway:
            engine = create_db_engine(url)
            try:
                yield VllmStack(gateway, make_session_factory(engine), admin)
            finally:
                engine.dispose()


def run_suite(stack: VllmStack, name: str, *, temperature: float, greedy: bool) -> RunOutcome:
    text = SUITE.format(name=name, temperature=temperature, greedy=str(greedy).lower())
    done = in_transaction(stack.sessions, import_suite, parse_suite(text))
    run_id = in_transaction(stack.sessions, create_run, done.suite_id, team_id=None).run_id

    async def work() -> RunOutcome:
        async with GatewayClient(stack.gateway.url, stack.admin_key) as gateway:
            options = RunnerOptions(ConcurrencyLimits(4, 4), logprob_wait_s=15)
            return await execute_run(stack.sessions, gateway, run_id, options)

    return asyncio.run(work())


def test_sampled_suite_runs_on_real_vllm_with_logprobs(stack: VllmStack) -> None:
    outcome = run_suite(stack, "vllm-sampled", temperature=1.0, greedy=False)
    assert (outcome.status, outcome.samples) == ("completed", {"done": 12})
    score = outcome.score
    assert score is not None and score.info.logprobs_mode == "raw_logprobs"
    table = score.questions.set_index("question_id")
    assert list(table["n_samples"]) == [6, 6]
    assert all(0.0 <= a <= 1.0 for a in table["agreement"])
    # The prompt share of the context comes from max_model_len as vLLM reports it.
    assert all(0.0 < f < 1.0 for f in table["max_prompt_fraction"])
    with stack.sessions() as session:
        assert session.get_one(EvalRun, int(score.info.run_id)).max_model_len == MAX_MODEL_LEN
        calls = recorded_calls(stack.sessions, Call.feature == "eval:vllm-sampled", at_least=12)
        logged = session.scalars(
            select(CallLogprobs).where(CallLogprobs.call_id.in_([c.id for c in calls]))
        ).all()
    assert len(calls) == len(logged) == 12
    assert {(c.source, c.logprob_mode, c.status_code) for c in calls} == {
        ("eval", "raw_logprobs", 200)
    }
    # Every question whose samples disagree is explained from the recorded logprobs.
    assert set(score.divergences) == set(table.index[table["n_answers"] > 1])
    for report in score.divergences.values():
        first, second = report.top_probabilities
        assert 0.0 < second <= first <= 1.0 and math.isclose(report.margin, first - second)


def test_greedy_suite_repeats_each_wording_on_one_backend(stack: VllmStack) -> None:
    outcome = run_suite(stack, "vllm-greedy", temperature=0.0, greedy=True)
    assert outcome.status == "completed" and outcome.score is not None
    assert outcome.score.info.greedy
    # Same wording, same backend, temperature 0: every wording gives one answer, every time.
    # (Different wordings may give different answers: that is paraphrase sensitivity.)
    paraphrases = outcome.score.paraphrases
    assert len(paraphrases) == 4 and (paraphrases["modal_share"] == 1.0).all()
    assert (paraphrases["n_samples"] == 3).all()
