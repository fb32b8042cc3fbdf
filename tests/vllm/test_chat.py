"""Chat completions on a real vLLM: the body, stream and usage facts the gateway relies on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

PostSse = Callable[[str, dict[str, Any]], tuple[httpx.Response, list[Any]]]
MESSAGES: list[Any] = [{"role": "user", "content": "What is the capital of France?"}]
# Greedy and never cut short by EOS: the output length is exactly max_tokens.
FIXED: dict[str, Any] = {"temperature": 0, "extra_body": {"ignore_eos": True}}
RAW_FIXED: dict[str, Any] = {"model": "tiny", "temperature": 0, "ignore_eos": True}
METRIC_KEYS = {
    "time_to_first_token_ms",
    "generation_time_ms",
    "queue_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
    "speculative_decoding",
}


def test_nonstream_body_usage_and_metrics(client: openai.OpenAI, http: httpx.Client) -> None:
    resp = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=4, **FIXED)
    body = resp.model_dump()
    assert resp.id.startswith("chatcmpl-")
    assert (resp.object, resp.model) == ("chat.completion", "tiny")
    assert str(resp.system_fingerprint).startswith("vllm-0.32.0-")
    choice = body["choices"][0]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("length", None)
    usage = body["usage"]
    assert usage["completion_tokens"] == 4
    assert usage["total_tokens"] == usage["prompt_tokens"] + 4
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    rendered = http.post("/tokenize", json={"model": "tiny", "messages": MESSAGES}).json()
    assert usage["prompt_tokens"] == rendered["count"]
    metrics = body["metrics"]
    assert set(metrics) == METRIC_KEYS
    # The engine's own definitions (vllm-protocol.md): ITL spreads decode over n - 1 gaps, and
    # tokens per second counts from scheduling (TTFT + decode) to the last token.
    assert metrics["mean_itl_ms"] * 3 == pytest.approx(metrics["generation_time_ms"], rel=1e-6)
    seconds = (metrics["time_to_first_token_ms"] + metrics["generation_time_ms"]) / 1000
    assert metrics["tokens_per_second"] == pytest.approx(4 / seconds, rel=1e-3)


def test_request_id_header_names_the_response(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny", messages=MESSAGES, max_tokens=1, extra_headers={"X-Request-Id": "pl-42"}
    )
    assert raw.parse().id == "chatcmpl-pl-42"
    # Only --enable-request-id-headers echoes the header back; this server runs without it.
    assert "x-request-id" not in raw.headers


def test_stream_without_usage(post_sse: PostSse, client: openai.OpenAI) -> None:
    body = {**RAW_FIXED, "messages": MESSAGES, "max_tokens": 5, "stream": True}
    resp, events = post_sse("/v1/chat/completions", body)
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all("usage" not in chunk for chunk in chunks)
    last = chunks[-1]["choices"][0]
    assert (last["finish_reason"], last["stop_reason"]) == ("length", None)
    assert "system_fingerprint" in chunks[-1]
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
    streamed = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    whole = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=5, **FIXED)
    assert streamed == whole.choices[0].message.content


def test_stream_include_usage_ends_with_usage_and_metrics(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="tiny",
        messages=MESSAGES,
        max_tokens=6,
        stream=True,
        stream_options={"include_usage": True},
        **FIXED,
    )
    chunks = [chunk.model_dump(exclude_unset=True) for chunk in stream]
    final = chunks[-1]
    assert final["choices"] == []
    assert final["usage"]["completion_tokens"] == 6
    assert set(final["metrics"]) == METRIC_KEYS - {"speculative_decoding"}
    assert all("usage" not in chunk for chunk in chunks[:-1])


def test_continuous_usage_counts_up(post_sse: PostSse) -> None:
    options = {"include_usage": True, "continuous_usage_stats": True}
    body = {**RAW_FIXED, "messages": MESSAGES, "max_tokens": 4, "stream": True}
    _, events = post_sse("/v1/chat/completions", {**body, "stream_options": options})
    counts = [event["usage"]["completion_tokens"] for event in events[:-1]]
    assert counts[0] == 0
    assert counts == sorted(counts)
    assert counts[-1] == 4


def test_n2_sums_usage_and_drops_metrics(client: openai.OpenAI, post_sse: PostSse) -> None:
    resp = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=3, n=2, extra_body={"ignore_eos": True}
    )
    assert [c.index for c in resp.choices] == [0, 1]
    body = resp.model_dump()
    assert body["usage"]["completion_tokens"] == 6
    assert body["metrics"] is None
    stream_body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3, "n": 2, "stream": True}
    stream_body["ignore_eos"] = True
    _, events = post_sse(
        "/v1/chat/completions", {**stream_body, "stream_options": {"include_usage": True}}
    )
    roles = [e["choices"][0]["index"] for e in events[:-2] if "role" in e["choices"][0]["delta"]]
    assert roles == [0, 1]
    assert events[-2]["usage"]["completion_tokens"] == 6
    assert "metrics" not in events[-2]


def test_stop_string_and_stop_token(client: openai.OpenAI) -> None:
    first = client.chat.completions.create(
        model="tiny",
        messages=MESSAGES,
        max_tokens=10,
        logprobs=True,
        temperature=0,
        extra_body={"ignore_eos": True, "return_token_ids": True},
    )
    choice = first.model_dump()["choices"][0]
    tokens = [entry["token"] for entry in choice["logprobs"]["content"]]
    at = _later_printable_token(tokens)
    stop = tokens[at]
    stopped = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=10, stop=[stop], **FIXED
    ).model_dump()["choices"][0]
    assert (stopped["finish_reason"], stopped["stop_reason"]) == ("stop", stop)
    assert stopped["message"]["content"] == str(first.choices[0].message.content).split(stop)[0]
    stop_id = choice["token_ids"][at]
    by_id = client.chat.completions.create(
        model="tiny",
        messages=MESSAGES,
        max_tokens=10,
        temperature=0,
        extra_body={"ignore_eos": True, "stop_token_ids": [stop_id], "return_token_ids": True},
    ).model_dump()["choices"][0]
    assert (by_id["finish_reason"], by_id["stop_reason"]) == ("stop", stop_id)
    assert by_id["token_ids"] == choice["token_ids"][: at + 1]


def _later_printable_token(tokens: list[str]) -> int:
    """Index of a printable token after the first whose text first occurs where it starts."""
    text = tokens[0]
    for at, token in enumerate(tokens[1:], start=1):
        printable = token.strip() and token.isascii() and token.isprintable()
        if printable and (text + token).find(token) == len(text):
            return at
        text += token
    raise AssertionError(f"no usable stop string among {tokens!r}")
