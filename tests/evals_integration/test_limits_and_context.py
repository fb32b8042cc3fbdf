"""Concurrency bounds, context checks, retries, failures and temperature 0, on a real stack."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evals.gateway_client import GatewayClient
from evals.runs.creation import create_run
from evals.runs.execution import ExecutionPolicy
from evals.runs.limits import ConcurrencyLimits
from evals.runs.runner import RunnerOptions, RunOutcome, execute_run
from evals.scoring import RunScore
from evals.suite import Question, render_prompt
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction
from tests.evals_integration.scripted import scenario, scenarios
from tests.evals_integration.stack import EvalStack, eval_stack

pytestmark = pytest.mark.xdist_group("evals_limits")
MAX_MODEL_LEN = 512
ANSWER = "The indemnity cap is 12 months of fees."
SUITE = """\
name: {name}
team: legal
model: tiny
greedy: {greedy}
sampling: {{max_tokens: {max_tokens}, temperature: {temperature}}}
paraphrases_per_question: 1
samples_per_paraphrase: {samples}
questions:
{questions}
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """A simulator with a small context window; documents get one fixed answer."""
    config = {
        "max_model_len": MAX_MODEL_LEN,
        "scenarios": [scenario("document", "<document>", {ANSWER: 1}), *scenarios()],
    }
    with eval_stack("postgres", tmp_path_factory.mktemp("limits"), config) as running:
        yield running


def question(key: str, context: str | None = None) -> str:
    lines = [f"  - id: {key}", f"    text: What is the indemnity cap of {key}?"]
    if context is not None:
        lines.append(f"    context: {context}")
    lines.append("    answer: {type: number, unit: months}")
    return "\n".join(lines)


def import_and_create(
    stack: EvalStack,
    name: str,
    questions: list[str],
    *,
    samples: int = 2,
    max_tokens: int = 64,
    temperature: float = 1.0,
    greedy: bool = False,
) -> int:
    text = SUITE.format(
        name=name,
        greedy=str(greedy).lower(),
        max_tokens=max_tokens,
        temperature=temperature,
        samples=samples,
        questions="\n".join(questions),
    )
    done = in_transaction(stack.sessions, import_suite, parse_suite(text))
    return in_transaction(stack.sessions, create_run, done.suite_id, team_id=None).run_id


def execute(
    stack: EvalStack, run_ids: list[int], options: RunnerOptions, *, resume: bool = False
) -> list[RunOutcome]:
    async def work() -> list[RunOutcome]:
        async with GatewayClient(stack.gateway.url, stack.admin_key) as gateway:
            runs = [
                execute_run(stack.sessions, gateway, run_id, options, resume=resume)
                for run_id in run_ids
            ]
            return list(await asyncio.gather(*runs))

    return asyncio.run(work())


def prompt_tokens(stack: EvalStack, key: str, context: str) -> int:
    """What the backend counts for a question's prompt (its own /tokenize)."""
    asked = Question.model_validate(
        {
            "id": key,
            "text": f"What is the indemnity cap of {key}?",
            "context": context,
            "answer": {"type": "number", "unit": "months"},
        }
    )
    body = {"model": "tiny", "messages": render_prompt(asked).as_openai()}
    response = httpx.post(f"{stack.simulator.base_url}/tokenize", json=body, timeout=10)
    response.raise_for_status()
    return int(response.json()["count"])


def context_of(stack: EvalStack, key: str, target: int) -> str:
    """A document making the prompt exactly `target` tokens long."""
    words = 1
    while prompt_tokens(stack, key, "clause " * words) < target:
        words += max(1, (target - prompt_tokens(stack, key, "clause " * words)) // 2)
    while prompt_tokens(stack, key, "clause " * words) > target:
        words -= 1
    return ("clause " * words).strip()


def scored(outcome: RunOutcome) -> RunScore:
    assert outcome.score is not None, outcome
    return outcome.score


def test_context_near_the_limit_and_context_overflow_are_flagged(stack: EvalStack) -> None:
    near = context_of(stack, "near", int(MAX_MODEL_LEN * 0.97))
    over = "clause " * (MAX_MODEL_LEN + 50)
    run_id = import_and_create(
        stack,
        "context",
        [question("near", near), question("over", over), question("plain", "A short document.")],
    )
    (outcome,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8)))
    assert outcome.status == "completed"
    assert outcome.samples == {"done": 4, "rejected": 2}
    table = scored(outcome).questions.set_index("question_id")
    assert table.loc["near", "context_near_limit"]
    assert table.loc["near", "max_prompt_fraction"] == pytest.approx(0.97, abs=0.01)
    assert table.loc["over", "context_truncated"] and table.loc["over", "parse_failures"] == 2
    assert not table.loc["plain", "context_flag"]
    assert set(scored(outcome).context_flagged) == {"near", "over"}


def test_answers_cut_at_max_tokens_are_flagged(stack: EvalStack) -> None:
    run_id = import_and_create(
        stack, "short-answers", [question("cut", "A document.")], max_tokens=3
    )
    (outcome,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8)))
    table = scored(outcome).questions.set_index("question_id")
    assert table.loc["cut", "output_truncated"] and table.loc["cut", "context_flag"]


def test_temperature_zero_suite_is_labelled_repeatable(stack: EvalStack) -> None:
    run_id = import_and_create(
        stack, "greedy", [question("cap")], samples=6, temperature=0.0, greedy=True
    )
    (outcome,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8)))
    score = scored(outcome)
    assert score.info.greedy
    row = score.questions.set_index("question_id").loc["cap"]
    # Greedy decoding on one backend always takes the " 12" branch (p=0.46 beats 0.41).
    assert (row["agreement"], row["modal_answer"], row["repeatability"]) == (
        1.0,
        "12 month",
        "repeatable",
    )


def watch_in_flight(stack: EvalStack, stop: threading.Event, seen: list[int]) -> None:
    """Sample the backend's in-flight count until stopped."""
    with httpx.Client(base_url=stack.simulator.base_url, timeout=5) as sim:
        while not stop.is_set():
            seen.append(int(sim.get("/_sim/stats").json()["in_flight"]))
            stop.wait(0.01)


def most_in_flight(stack: EvalStack, run_ids: list[int], limits: ConcurrencyLimits) -> int:
    """Run the runs together on slow decoding; the most calls the backend saw at once."""
    seen: list[int] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch_in_flight, args=(stack, stop, seen))
    stack.simulator.set_timing({"decode_ms_per_token": 30.0})
    watcher.start()
    try:
        outcomes = execute(stack, run_ids, RunnerOptions(limits))
    finally:
        stop.set()
        watcher.join()
        stack.simulator.set_timing({})
    assert [o.status for o in outcomes] == ["completed"] * len(run_ids)
    return max(seen)


def test_one_suite_keeps_to_its_own_bound(stack: EvalStack) -> None:
    run_id = import_and_create(stack, "bounded", [question("cap"), question("law")], samples=6)
    assert most_in_flight(stack, [run_id], ConcurrencyLimits(per_suite=2, per_backend=8)) == 2


def test_suites_together_keep_to_the_backend_bound(stack: EvalStack) -> None:
    # Three suites of 2 each would reach 6 at once; the shared backend bound holds them to 3.
    runs = [
        import_and_create(stack, f"shared-{i}", [question("cap"), question("law")], samples=6)
        for i in range(3)
    ]
    assert most_in_flight(stack, runs, ConcurrencyLimits(per_suite=2, per_backend=3)) == 3


def test_failing_backend_fails_the_run_and_resume_finishes_it(stack: EvalStack) -> None:
    run_id = import_and_create(stack, "flaky", [question("cap"), question("law")], samples=3)
    quick = ExecutionPolicy(max_attempts=2, backoff_s=0.01)
    stack.simulator.set_faults({"error": {"rate": 1.0, "status": 503}})
    try:
        (broken,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8), quick))
    finally:
        stack.simulator.set_faults({})
    assert (broken.status, broken.samples, broken.score) == ("failed", {"failed": 6}, None)
    (resumed,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8)), resume=True)
    assert (resumed.status, resumed.samples) == ("completed", {"done": 6})


def test_transient_backend_errors_are_retried(stack: EvalStack) -> None:
    run_id = import_and_create(stack, "transient", [question("cap"), question("law")], samples=5)
    patient = ExecutionPolicy(max_attempts=12, backoff_s=0.01, max_backoff_s=0.05)
    faults: dict[str, Any] = {"error": {"rate": 0.4, "status": 503}, "seed": 11}
    stack.simulator.set_faults(faults)
    try:
        (outcome,) = execute(stack, [run_id], RunnerOptions(ConcurrencyLimits(4, 8), patient))
    finally:
        stack.simulator.set_faults({})
    assert (outcome.status, outcome.samples) == ("completed", {"done": 10})
    assert stack.simulator.stats()["faults_injected"]
