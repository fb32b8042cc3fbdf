"""The requests that capture.py sends to a real vLLM; each becomes one fixture file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

CHAT = "/v1/chat/completions"
CMPL = "/v1/completions"
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
# Greedy, and never cut short by EOS, so that a replay yields the same tokens and events.
FIXED = {"model": "tiny", "temperature": 0, "ignore_eos": True}
# Far over the 512-token context whatever the tokenizer does with it.
TOO_LONG = "The quick brown fox jumps over the lazy dog. " * 120


@dataclass(frozen=True)
class Case:
    """One request: a JSON body, or raw bytes (content) for malformed input."""

    name: str
    path: str
    json: dict[str, Any] | None = None
    content: str | None = None
    method: str = "POST"
    headers: dict[str, str] = field(default_factory=dict)
    # Computes the JSON body from a first request, for cases that depend on the model's output.
    prepare: Callable[[httpx.Client], dict[str, Any]] | None = None


def _chat(**extra: Any) -> dict[str, Any]:
    return {**FIXED, "messages": QUESTION, "max_tokens": 4, **extra}


def _cmpl(**extra: Any) -> dict[str, Any]:
    return {**FIXED, "prompt": "The quick brown", "max_tokens": 3, **extra}


def stop_at_later_token(client: httpx.Client) -> dict[str, Any]:
    """Return a completions body that stops at a printable token after the greedy output's first."""
    body = _cmpl(max_tokens=8, logprobs=0)
    tokens = client.post(CMPL, json=body).json()["choices"][0]["logprobs"]["tokens"]
    text = ""
    for token in tokens:
        printable = token.strip() and token.isascii() and token.isprintable()
        # The stop string must first occur exactly where this token starts.
        if text and printable and (text + token).find(token) == len(text):
            return _cmpl(max_tokens=8, stop=[token])
        text += token
    raise RuntimeError(f"no usable stop string in {tokens!r}")


CASES = (
    Case(
        "chat_nonstream_logprobs",
        CHAT,
        _chat(logprobs=True, top_logprobs=3),
        headers={"X-Request-Id": "fresh-req-1"},
    ),
    Case("chat_nonstream_plain", CHAT, _chat()),
    Case(
        "chat_stream_usage_logprobs",
        CHAT,
        _chat(
            max_tokens=3,
            logprobs=True,
            top_logprobs=2,
            stream=True,
            stream_options={"include_usage": True},
        ),
    ),
    Case("chat_stream_nousage", CHAT, _chat(max_tokens=3, stream=True)),
    Case(
        "chat_stream_continuous",
        CHAT,
        _chat(
            max_tokens=3,
            stream=True,
            stream_options={"include_usage": True, "continuous_usage_stats": True},
        ),
    ),
    Case("chat_n2", CHAT, _chat(max_tokens=2, n=2, temperature=1.0, seed=7)),
    Case(
        "chat_n2_stream_usage",
        CHAT,
        _chat(
            max_tokens=2,
            n=2,
            temperature=1.0,
            seed=7,
            stream=True,
            stream_options={"include_usage": True},
        ),
    ),
    Case("cmpl_nonstream_logprobs", CMPL, _cmpl(logprobs=2)),
    Case("cmpl_echo_logprobs", CMPL, _cmpl(logprobs=1, echo=True)),
    Case("cmpl_stream_usage", CMPL, _cmpl(stream=True, stream_options={"include_usage": True})),
    Case("cmpl_stop", CMPL, prepare=stop_at_later_token),
    Case("maxtokens_clamp", CHAT, _chat(max_tokens=500)),
    Case("err_bad_model", CHAT, {**_chat(), "model": "nope"}),
    Case("err_badjson", CHAT, content="{not json", headers={"Content-Type": "application/json"}),
    Case("err_validation", CHAT, {**_chat(), "messages": "oops"}),
    Case("err_too_long_chat", CHAT, _chat(messages=[{"role": "user", "content": TOO_LONG}])),
    Case("err_too_long_cmpl", CMPL, _cmpl(prompt=TOO_LONG)),
    Case("err_maxtokens_huge", CHAT, _chat(max_tokens=100000)),
    Case("err_top_logprobs_25", CHAT, _chat(logprobs=True, top_logprobs=25)),
    Case("err_top_logprobs_without_logprobs", CHAT, _chat(top_logprobs=2)),
    Case(
        "err_stream_options_no_stream",
        CHAT,
        _chat(stream_options={"include_usage": True}),
    ),
    Case("err_prompt_logprobs_stream", CHAT, _chat(stream=True, prompt_logprobs=1)),
    Case("err_n2_greedy", CHAT, _chat(n=2)),
    Case("err_maxtokens_zero", CHAT, _chat(max_tokens=0)),
    # 512 prompt tokens: the clamp leaves max_tokens=0, refused as a max_tokens error.
    Case("err_context_full", CMPL, _cmpl(prompt=[1] + [45] * 511, max_tokens=1)),
    Case("models", "/v1/models", method="GET"),
    Case("health", "/health", method="GET"),
    Case("version", "/version", method="GET"),
)
