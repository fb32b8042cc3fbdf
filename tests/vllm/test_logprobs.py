"""Logprobs on a real vLLM: the top-k layout and the sampled-token-first rule."""

from __future__ import annotations

import math
from typing import Any

import openai
import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

MESSAGES: list[Any] = [{"role": "user", "content": "How many days are in a week?"}]
NO_EOS: dict[str, Any] = {"ignore_eos": True}


def _chat_logprobs(client: openai.OpenAI, **params: Any) -> list[dict[str, Any]]:
    resp = client.chat.completions.create(
        model="tiny", messages=MESSAGES, logprobs=True, extra_body=NO_EOS, **params
    )
    content: list[dict[str, Any]] = resp.model_dump()["choices"][0]["logprobs"]["content"]
    assert len(content) == params["max_tokens"]
    return content


@pytest.mark.parametrize("k", [0, 1, 5, 20])
def test_chat_top_k_layout(client: openai.OpenAI, k: int) -> None:
    content = _chat_logprobs(client, max_tokens=6, top_logprobs=k, temperature=0)
    for entry in content:
        assert set(entry) == {"token", "logprob", "bytes", "top_logprobs"}
        assert len(entry["top_logprobs"]) == k
        assert -9999.0 <= entry["logprob"] <= 0.0
        # A token that ends inside a UTF-8 sequence shows as "" with no bytes.
        if entry["token"]:
            assert entry["bytes"] == list(entry["token"].encode())
        if k:
            top = entry["top_logprobs"][0]
            assert (top["token"], top["logprob"]) == (entry["token"], entry["logprob"])


def test_greedy_samples_the_most_likely_token(client: openai.OpenAI) -> None:
    for entry in _chat_logprobs(client, max_tokens=8, top_logprobs=5, temperature=0):
        assert entry["logprob"] >= max(t["logprob"] for t in entry["top_logprobs"])


def test_sampled_token_is_first_even_when_not_most_likely(client: openai.OpenAI) -> None:
    content = _chat_logprobs(client, max_tokens=40, top_logprobs=2, temperature=2.0, seed=11)
    outranked = [e for e in content if e["top_logprobs"][1]["logprob"] > e["logprob"]]
    assert outranked, "a hot sample of 40 tokens should pick a less likely token at least once"
    for entry in content:
        assert entry["top_logprobs"][0]["logprob"] == entry["logprob"]
        # Raw logprobs (the default mode) come from the model before temperature is applied.
        total = sum(math.exp(t["logprob"]) for t in entry["top_logprobs"])
        assert total <= 1.0 + 1e-3


def test_completions_legacy_layout(client: openai.OpenAI) -> None:
    resp = client.completions.create(
        model="tiny", prompt="Two plus two is", max_tokens=6, logprobs=3, extra_body=NO_EOS
    )
    logprobs = resp.model_dump()["choices"][0]["logprobs"]
    tokens = logprobs["tokens"]
    assert len(tokens) == len(logprobs["token_logprobs"]) == len(logprobs["top_logprobs"]) == 6
    # Offsets run over the token strings, so an incomplete UTF-8 token ("") adds nothing.
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    assert logprobs["text_offset"] == offsets
    for token, top in zip(tokens, logprobs["top_logprobs"], strict=True):
        # Up to k + 1 entries keyed by token text; tokens with the same text collapse into one.
        assert 1 <= len(top) <= 4
        assert all(lp <= 0.0 for lp in top.values())
        assert token in top


def test_completions_echo_puts_null_first(client: openai.OpenAI) -> None:
    resp = client.completions.create(
        model="tiny",
        prompt="Two plus two is",
        max_tokens=2,
        logprobs=1,
        echo=True,
        extra_body=NO_EOS,
    )
    choice = resp.model_dump()["choices"][0]
    usage = resp.model_dump()["usage"]
    logprobs = choice["logprobs"]
    assert len(logprobs["tokens"]) == usage["prompt_tokens"] + 2
    assert logprobs["token_logprobs"][0] is None
    assert logprobs["top_logprobs"][0] is None
    assert logprobs["tokens"][0] == "<s>"
    assert choice["text"].startswith("Two plus two is")
    # With echo and logprobs the choice also carries prompt_logprobs keyed by token id.
    assert choice["prompt_logprobs"][0] is None
    assert len(choice["prompt_logprobs"]) == usage["prompt_tokens"]
