"""Legacy completions on a real vLLM: defaults, prompts of several kinds, and streaming."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

PostSse = Callable[[str, dict[str, Any]], tuple[httpx.Response, list[Any]]]
PROMPT = "The quick brown"
NO_EOS: dict[str, Any] = {"extra_body": {"ignore_eos": True}}


def test_nonstream_defaults_to_16_tokens(client: openai.OpenAI, http: httpx.Client) -> None:
    resp = client.completions.create(model="tiny", prompt=PROMPT, **NO_EOS)
    assert resp.id.startswith("cmpl-")
    assert resp.object == "text_completion"
    body = resp.model_dump()
    assert body["usage"]["completion_tokens"] == 16
    assert body["choices"][0]["finish_reason"] == "length"
    # A plain prompt gets the tokenizer's BOS; /tokenize counts it the same way.
    tokens = http.post("/tokenize", json={"model": "tiny", "prompt": PROMPT}).json()
    assert body["usage"]["prompt_tokens"] == tokens["count"]
    assert tokens["tokens"][0] == 1
    # Completions report created_cache_tokens as null where chat reports 0.
    assert body["usage"]["prompt_tokens_details"]["created_cache_tokens"] is None
    assert set(body["metrics"]) >= {"time_to_first_token_ms", "generation_time_ms"}


def test_prompt_list_and_token_ids(client: openai.OpenAI) -> None:
    many = client.completions.create(model="tiny", prompt=[PROMPT, "Hello"], max_tokens=2, **NO_EOS)
    assert sorted(c.index for c in many.choices) == [0, 1]
    assert many.usage is not None
    assert many.usage.completion_tokens == 4
    ids = client.completions.create(model="tiny", prompt=[1, 45, 78], max_tokens=2, **NO_EOS)
    assert ids.usage is not None
    assert ids.usage.prompt_tokens == 3


def test_stream_has_no_role_chunk_and_ends_with_usage(
    post_sse: PostSse, http: httpx.Client
) -> None:
    body = {"model": "tiny", "prompt": PROMPT, "max_tokens": 3, "ignore_eos": True}
    body |= {"temperature": 0, "stream": True, "stream_options": {"include_usage": True}}
    resp, events = post_sse("/v1/completions", body)
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert events[-1] == "[DONE]"
    usage_chunk, chunks = events[-2], events[:-2]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["completion_tokens"] == 3
    assert usage_chunk["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    assert "metrics" in usage_chunk
    assert all(c["object"] == "text_completion" for c in chunks)
    assert all("text" in c["choices"][0] for c in chunks)
    assert [c["choices"][0]["finish_reason"] for c in chunks][-1] == "length"
    # Unlike chat chunks, every completions chunk carries stop_reason (null until the end).
    assert all("stop_reason" in c["choices"][0] for c in chunks)
    plain = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    whole = http.post("/v1/completions", json=plain)
    assert "".join(c["choices"][0]["text"] for c in chunks) == whole.json()["choices"][0]["text"]


def test_stop_string_sets_stop_reason(client: openai.OpenAI) -> None:
    probe = client.completions.create(
        model="tiny", prompt=PROMPT, max_tokens=8, temperature=0, logprobs=0, **NO_EOS
    )
    assert probe.choices[0].logprobs is not None
    tokens = list(probe.choices[0].logprobs.tokens or [])
    text, stop = tokens[0], ""
    for token in tokens[1:]:
        if token.strip() and token.isascii() and (text + token).find(token) == len(text):
            stop = token
            break
        text += token
    assert stop, f"no usable stop string among {tokens!r}"
    resp = client.completions.create(
        model="tiny", prompt=PROMPT, max_tokens=8, temperature=0, stop=[stop], **NO_EOS
    )
    choice = resp.model_dump()["choices"][0]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", stop)
    assert choice["text"] == probe.choices[0].text.split(stop)[0]
