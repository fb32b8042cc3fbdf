"""The gateway is invisible in front of the real vLLM: same requests, same bodies and SSE events.

The gateway asks vLLM for logprobs and for a usage chunk the client may not want, and must take
them out again; real vLLM decides the key order, where `system_fingerprint` goes and what the
usage chunk looks like. Requests are greedy or seeded so both calls generate the same tokens,
and prompts stay under one prefix-cache block (128 tokens) so neither call hits the cache.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.vllm.conftest import parse_sse
from tests.vllm.logprob_ties import align_tied
from tests.vllm.stream_folding import fold_stream

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

CHAT, CMPL = "/v1/chat/completions", "/v1/completions"
MESSAGES: list[Any] = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT = "The quick brown"
GREEDY: dict[str, Any] = {"model": "tiny", "temperature": 0, "ignore_eos": True, "max_tokens": 6}
SEEDED: dict[str, Any] = {"model": "tiny", "seed": 5, "ignore_eos": True, "max_tokens": 5}
USAGE = {"include_usage": True}
# The first three tokens may not be EOS; then a huge bias makes EOS the sampled token.
EOS_AT_4 = {"min_tokens": 3, "logit_bias": {"2": 100}, "max_tokens": 10}
# An echoed assistant turn that the model continues.
ECHO: dict[str, Any] = {
    **GREEDY,
    "messages": [*MESSAGES, {"role": "assistant", "content": "Paris"}],
    "echo": True,
    "add_generation_prompt": False,
}

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # First, while the module's new gateway has not yet learnt vLLM's system_fingerprint: it
    # holds back the finishing chunk until the usage chunk it asked for names it.
    "chat_stream": (CHAT, {**GREEDY, "messages": MESSAGES, "max_tokens": 5, "stream": True}),
    "chat": (CHAT, {**GREEDY, "messages": MESSAGES, "max_tokens": 6}),
    "chat_top2": (CHAT, {**GREEDY, "messages": MESSAGES, "logprobs": True, "top_logprobs": 2}),
    "chat_top_all": (CHAT, {**GREEDY, "messages": MESSAGES, "logprobs": True, "top_logprobs": -1}),
    "chat_logprobs": (CHAT, {**GREEDY, "messages": MESSAGES, "logprobs": True, "max_tokens": 4}),
    "chat_top8": (CHAT, {**GREEDY, "messages": MESSAGES, "logprobs": True, "top_logprobs": 8}),
    "chat_n2": (CHAT, {**SEEDED, "messages": MESSAGES, "n": 2, "max_tokens": 4}),
    "chat_top_null": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "logprobs": True, "top_logprobs": None},
    ),
    "chat_prompt_logprobs": (CHAT, {**GREEDY, "messages": MESSAGES, "prompt_logprobs": 2}),
    "chat_stop": (CHAT, {**GREEDY, "messages": MESSAGES, "stop": ["a", "e"], "max_tokens": 12}),
    "chat_eos": (CHAT, {**GREEDY, "ignore_eos": False, "messages": MESSAGES, **EOS_AT_4}),
    "chat_echo": (CHAT, {**ECHO, "max_tokens": 3}),
    "chat_echo_top2": (CHAT, {**ECHO, "max_tokens": 3, "logprobs": True, "top_logprobs": 2}),
    "chat_stream_echo": (CHAT, {**ECHO, "max_tokens": 3, "stream": True}),
    "chat_stream_usage": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "stream": True, "stream_options": USAGE},
    ),
    "chat_stream_continuous": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "max_tokens": 4, "stream": True}
        | {"stream_options": {"include_usage": True, "continuous_usage_stats": True}},
    ),
    "chat_stream_continuous_only": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "max_tokens": 4, "stream": True}
        | {"stream_options": {"continuous_usage_stats": True}},
    ),
    "chat_stream_top3": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "stream": True, "logprobs": True, "top_logprobs": 3},
    ),
    "chat_stream_eos": (
        CHAT,
        {**GREEDY, "ignore_eos": False, "messages": MESSAGES, "stream": True, **EOS_AT_4},
    ),
    "chat_stream_n2": (CHAT, {**SEEDED, "messages": MESSAGES, "n": 2, "stream": True}),
    "chat_stream_n2_usage": (
        CHAT,
        {**SEEDED, "messages": MESSAGES, "n": 2, "stream": True, "stream_options": USAGE},
    ),
    "chat_err_stream_options": (CHAT, {**GREEDY, "messages": MESSAGES, "stream_options": USAGE}),
    "chat_err_top_without_logprobs": (CHAT, {**GREEDY, "messages": MESSAGES, "top_logprobs": 2}),
    "chat_err_top25": (
        CHAT,
        {**GREEDY, "messages": MESSAGES, "logprobs": True, "top_logprobs": 25},
    ),
    "chat_err_validation": (CHAT, {**GREEDY, "messages": "oops"}),
    "chat_err_n2_greedy": (CHAT, {**GREEDY, "messages": MESSAGES, "n": 2}),
    "cmpl": (CMPL, {**GREEDY, "prompt": PROMPT, "max_tokens": 6}),
    "cmpl_logprobs": (CMPL, {**GREEDY, "prompt": PROMPT, "logprobs": 1, "max_tokens": 6}),
    "cmpl_echo": (CMPL, {**GREEDY, "prompt": PROMPT, "echo": True, "max_tokens": 3}),
    "cmpl_echo_logprobs": (
        CMPL,
        {**GREEDY, "prompt": PROMPT, "echo": True, "logprobs": 2, "max_tokens": 3},
    ),
    "cmpl_n2": (CMPL, {**SEEDED, "prompt": PROMPT, "n": 2, "max_tokens": 4}),
    "cmpl_eos": (CMPL, {**GREEDY, "ignore_eos": False, "prompt": PROMPT, **EOS_AT_4}),
    "cmpl_stream": (CMPL, {**GREEDY, "prompt": PROMPT, "max_tokens": 6, "stream": True}),
    "cmpl_stream_usage": (
        CMPL,
        {**GREEDY, "prompt": PROMPT, "stream": True, "stream_options": USAGE},
    ),
    "cmpl_stream_continuous_only": (
        CMPL,
        {**GREEDY, "prompt": PROMPT, "max_tokens": 4, "stream": True}
        | {"stream_options": {"continuous_usage_stats": True}},
    ),
    "cmpl_stream_logprobs": (CMPL, {**GREEDY, "prompt": PROMPT, "stream": True, "logprobs": 0}),
    "cmpl_stream_echo": (
        CMPL,
        {**GREEDY, "prompt": PROMPT, "stream": True, "echo": True, "max_tokens": 3},
    ),
    "cmpl_stream_eos": (
        CMPL,
        {**GREEDY, "ignore_eos": False, "prompt": PROMPT, "stream": True, **EOS_AT_4},
    ),
    "cmpl_stream_n2": (CMPL, {**SEEDED, "prompt": PROMPT, "n": 2, "stream": True, "max_tokens": 5}),
    "cmpl_err_max_tokens": (CMPL, {**GREEDY, "prompt": PROMPT, "max_tokens": 100000}),
}
# Values that differ between any two calls, even to the same server.
VOLATILE = {
    "id",
    "created",
    "time_to_first_token_ms",
    "generation_time_ms",
    "queue_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
}


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (type(v).__name__ if k in VOLATILE else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _split(events: list[Any]) -> dict[str, list[Any]]:
    """Events per choice index, in order; events without choices under "events"."""
    split: dict[str, list[Any]] = {}
    for event in events:
        choices = event.get("choices") if isinstance(event, dict) else None
        split.setdefault(str(choices[0]["index"]) if choices else "events", []).append(event)
    return split


def _cut(split: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Where each choice's stream was cut: per event its text and how many tokens it carries.

    vLLM cuts a stream by engine steps, so two runs of one request may put the same tokens in
    the same number of chunks at other boundaries (a token of an incomplete UTF-8 sequence
    sent with the one before it, or after).
    """
    return {key: [_chunk_signature(event) for event in events] for key, events in split.items()}


def _chunk_signature(event: Any) -> Any:
    choices = event.get("choices") if isinstance(event, dict) else None
    if not choices:
        return None
    choice = choices[0]
    text = choice.get("text", (choice.get("delta") or {}).get("content"))
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        entries = logprobs.get("tokens", logprobs.get("content"))
        return text, len(entries) if isinstance(entries, list) else None
    return text, None


def _ordered(value: Any) -> Any:
    """Objects as lists of (key, value) pairs, so that comparing them compares key order too."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


@pytest.mark.parametrize("case", CASES)
def test_same_response_direct_and_through_the_gateway(
    case: str, http: httpx.Client, gateway_http: httpx.Client
) -> None:
    path, body = CASES[case]
    direct, via = http.post(path, json=body), gateway_http.post(path, json=body)
    assert (via.status_code, via.headers["content-type"]) == (
        direct.status_code,
        direct.headers["content-type"],
    ), via.text
    if not via.headers["content-type"].startswith("text/event-stream"):
        expected = _mask(direct.json())
        assert _ordered(align_tied(expected, _mask(via.json()))) == _ordered(expected)
        return
    direct_events, via_events = _mask(parse_sse(direct.text)), _mask(parse_sse(via.text))
    assert via_events[-1] == direct_events[-1] == "[DONE]"
    # Key order aside here: where a merged chunk first shows a key depends on the cut.
    expected = fold_stream(direct_events)
    assert align_tied(expected, fold_stream(via_events)) == expected
    # Cut into chunks alike, each choice's events are the same, one for one and key for key
    # (the choices of n > 1 interleave in no fixed order).
    direct_split, via_split = _split(direct_events), _split(via_events)
    if _cut(via_split) == _cut(direct_split):
        assert _ordered(align_tied(direct_split, via_split)) == _ordered(direct_split)
