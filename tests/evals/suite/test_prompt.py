"""Prompts per (question, paraphrase) and per-request seeds."""

from __future__ import annotations

from evals.suite import load_suite, render_prompt, sample_seed
from tests.evals.suite.test_loader import SUITE


def test_prompt_has_context_wording_and_format_instruction() -> None:
    suite = load_suite(SUITE)
    messages = render_prompt(suite.question("cap"), "How large is the indemnity cap?").as_openai()
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert (
        "<document>\nClause 14.2: liability is capped at twelve months of fees.\n</document>"
        in user
    )
    assert "Question: How large is the indemnity cap?" in user
    assert "`Answer: <number> months`" in user
    choice = render_prompt(suite.question("law")).as_openai()[1]["content"]
    assert "Question: Which law governs the agreement?" in choice
    assert "exactly one of: england, new york" in choice
    assert "<document>" not in choice


def test_seeds_follow_the_policy() -> None:
    suite = load_suite(SUITE)
    seeds = {sample_seed(suite.sampling, "cap", p, s) for p in range(20) for s in range(5)}
    assert len(seeds) == 100
    assert sample_seed(suite.sampling, "cap", 3, 1) == sample_seed(suite.sampling, "cap", 3, 1)
    fixed = suite.sampling.model_copy(update={"seed_policy": "fixed", "seed": 7})
    assert sample_seed(fixed, "cap", 3, 1) == 7
    assert (
        sample_seed(suite.sampling.model_copy(update={"seed_policy": "none"}), "cap", 0, 0) is None
    )
