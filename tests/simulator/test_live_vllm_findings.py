"""Behaviours learnt from the live comparison with a real vLLM 0.32 (tests/vllm), kept here so
the simulator stays right without the real server: usage options, echo and EOS."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import sse_payloads

CHAT, CMPL = "/v1/chat/completions", "/v1/completions"
MESSAGES = [{"role": "user", "content": "Hi"}]
FIXED: dict[str, Any] = {"model": "tiny", "temperature": 0, "ignore_eos": True, "max_tokens": 3}
ECHO: dict[str, Any] = {
    **FIXED,
    "messages": [*MESSAGES, {"role": "assistant", "content": "Hello"}],
    "echo": True,
    "add_generation_prompt": False,
}


@pytest.fixture(scope="module")
def live_like() -> Iterator[httpx.Client]:
    """Like scripts/vllm-server's vLLM; unscripted answers end with EOS after 4 tokens."""
    config = {
        "max_model_len": 512,
        "enable_request_id_headers": False,
        "prefix_cache": {"block_size": 128},
        "timing": {"decode_ms_per_token": 0.5},
        "unscripted": {"min_tokens": 4, "max_tokens": 4},
    }
    with (
        SimulatorProcess(config) as sim,
        httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
    ):
        yield http


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [orjson.loads(p) for p in sse_payloads(response.text) if p != "[DONE]"]


@pytest.mark.parametrize(
    ("path", "prompt"), [(CHAT, {"messages": MESSAGES}), (CMPL, {"prompt": "Hi"})]
)
def test_continuous_usage_needs_include_usage(
    live_like: httpx.Client, path: str, prompt: dict[str, Any]
) -> None:
    options = {"continuous_usage_stats": True}
    body = {**FIXED, **prompt, "stream": True, "stream_options": options}
    events = _events(live_like.post(path, json=body))
    assert all("usage" not in event for event in events)
    assert all(event["choices"] for event in events), "no usage chunk either"
    assert "system_fingerprint" in events[-1], "the finishing chunk carries the fingerprint"
    empty = _events(live_like.post(path, json={**body, "stream_options": {}}))
    assert all("usage" not in event for event in empty)


def test_completions_running_usage_has_no_details(live_like: httpx.Client) -> None:
    options = {"include_usage": True, "continuous_usage_stats": True}
    body = {**FIXED, "prompt": "Hi", "stream": True, "stream_options": options}
    events = _events(live_like.post(CMPL, json=body))
    running = [event["usage"] for event in events if event["choices"]]
    assert [list(usage) for usage in running] == [
        ["prompt_tokens", "total_tokens", "completion_tokens"]
    ] * len(running)
    # Chat's running usage does carry `completion_tokens_details: null`.
    chat = _events(live_like.post(CHAT, json={**body, "prompt": None, "messages": MESSAGES}))
    assert chat[0]["usage"]["completion_tokens_details"] is None


def test_empty_stream_options_without_stream_is_accepted(live_like: httpx.Client) -> None:
    response = live_like.post(CHAT, json={**FIXED, "messages": MESSAGES, "stream_options": {}})
    assert response.status_code == 200, response.text


def test_chat_echo_gets_prompt_logprobs_of_top_logprobs(live_like: httpx.Client) -> None:
    plain = live_like.post(CHAT, json=ECHO).json()
    prompt_logprobs = plain["prompt_logprobs"]
    assert prompt_logprobs[0] is None
    assert all(len(position) == 1 for position in prompt_logprobs[1:]), "only the prompt token"
    assert len(prompt_logprobs) == plain["usage"]["prompt_tokens"]
    wider = live_like.post(CHAT, json={**ECHO, "logprobs": True, "top_logprobs": 2}).json()
    assert all(2 <= len(position) <= 3 for position in wider["prompt_logprobs"][1:])
    asked = live_like.post(CHAT, json={**ECHO, "prompt_logprobs": 1}).json()
    assert all(1 <= len(position) <= 2 for position in asked["prompt_logprobs"][1:])


def test_completions_stream_echo_names_the_prompt_tokens(live_like: httpx.Client) -> None:
    body = {**FIXED, "prompt": "Hi there", "stream": True, "echo": True}
    events = _events(live_like.post(CMPL, json=body))
    first = events[0]["choices"][0]
    assert first["text"].startswith("Hi there")
    assert isinstance(first["prompt_token_ids"], list) and first["prompt_token_ids"]
    assert all(event["choices"][0]["prompt_token_ids"] is None for event in events[1:])


@pytest.mark.parametrize("path", [CHAT, CMPL])
def test_eos_has_a_logprob_entry_but_no_text(live_like: httpx.Client, path: str) -> None:
    body: dict[str, Any] = {"model": "tiny", "seed": 1, "max_tokens": 20}
    if path == CHAT:
        body |= {"messages": MESSAGES, "logprobs": True}
    else:
        body |= {"prompt": "Hi", "logprobs": 0}
    response = live_like.post(path, json=body).json()
    choice = response["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["stop_reason"] is None
    logprobs = choice["logprobs"]
    tokens = [e["token"] for e in logprobs["content"]] if path == CHAT else logprobs["tokens"]
    assert tokens[-1] == "</s>"
    assert len(tokens) == response["usage"]["completion_tokens"], "EOS is a completion token"
    text = choice["message"]["content"] if path == CHAT else choice["text"]
    assert "</s>" not in text
