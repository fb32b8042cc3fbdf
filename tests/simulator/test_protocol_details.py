"""Smaller protocol behaviours: partial UTF-8 in streams, echo, prompt lists, stop tokens."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import sse_payloads

SCENARIOS = [
    {"match": "coffee", "answers": [{"text": "Café au lait.", "p": 1}]},
    {"match": "count", "answers": [{"text": "one two three", "p": 1}]},
]


@pytest.fixture(scope="module")
def detail_http() -> Iterator[httpx.Client]:
    config = {"scenarios": SCENARIOS, "timing": {"decode_ms_per_token": 0.5}}
    with (
        SimulatorProcess(config) as sim,
        httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
    ):
        yield http


def _chunks(response: httpx.Response) -> list[dict[str, Any]]:
    return [orjson.loads(p) for p in sse_payloads(response.text) if p != "[DONE]"]


def test_non_ascii_answer_streams_partial_utf8_like_vllm(detail_http: httpx.Client) -> None:
    body = {
        "messages": [{"role": "user", "content": "coffee?"}],
        "stream": True,
        "logprobs": True,
        "top_logprobs": 1,
    }
    chunks = _chunks(detail_http.post("/v1/chat/completions", json=body))
    content = [c["choices"][0] for c in chunks if c["choices"] and "logprobs" in c["choices"][0]]
    deltas = [choice["delta"].get("content") for choice in content[1:]]
    assert "".join(d or "" for d in deltas) == "Café au lait."
    partial = [choice for choice in content[1:] if choice["logprobs"]["content"][0]["token"] == ""]
    assert len(partial) == 2  # é is two byte tokens
    assert partial[0]["delta"]["content"] == ""
    assert partial[0]["logprobs"]["content"][0]["bytes"] == []
    assert "é" in partial[1]["delta"]["content"]


def test_chat_echo_repeats_the_last_message_of_the_answering_role(
    detail_http: httpx.Client,
) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "count"},
            {"role": "assistant", "content": "Sure:"},
        ],
        "add_generation_prompt": False,
        "echo": True,
        "max_tokens": 3,
    }
    content = detail_http.post("/v1/chat/completions", json=body).json()
    assert content["choices"][0]["message"]["content"].startswith("Sure:")


def test_completion_prompt_lists_fan_out_choices(detail_http: httpx.Client) -> None:
    prompts = ["count please", "coffee please"]
    body = {"prompt": prompts, "n": 2, "max_tokens": 20}
    data = detail_http.post("/v1/completions", json=body).json()
    assert [c["index"] for c in data["choices"]] == [0, 1, 2, 3]
    texts = [c["text"] for c in data["choices"]]
    assert texts == ["one two three", "one two three", "Café au lait.", "Café au lait."]
    assert data["metrics"] is None
    tokenized = [detail_http.post("/tokenize", json={"prompt": p}).json()["count"] for p in prompts]
    assert data["usage"]["prompt_tokens"] == sum(tokenized)


def test_token_id_prompts_and_their_errors(detail_http: httpx.Client) -> None:
    ids = detail_http.post("/tokenize", json={"prompt": "count to three"}).json()["tokens"]
    ok = detail_http.post("/v1/completions", json={"prompt": ids, "max_tokens": 20})
    assert ok.json()["choices"][0]["text"] == "one two three"
    # vLLM names the `prompt` parameter only for a missing or empty text prompt.
    bad_prompts: list[tuple[object, str | None, str]] = [
        ([10**7], None, "Token id 10000000 is out of vocabulary"),
        ("", "prompt", "Either prompt or prompt_embeds must be provided and non-empty."),
        ([[]], None, "The decoder prompt cannot be empty"),
        ([], None, "You must pass at least one prompt"),
    ]
    for bad, param, message in bad_prompts:
        response = detail_http.post("/v1/completions", json={"prompt": bad})
        assert response.status_code == 400, bad
        error = response.json()["error"]
        assert (error["param"], error["message"].split(" (parameter")[0]) == (param, message)
    # A list holding an empty string is a prompt of just BOS.
    assert detail_http.post("/v1/completions", json={"prompt": [""]}).status_code == 200


def test_stop_token_ids_report_the_token(detail_http: httpx.Client) -> None:
    tokens = detail_http.post("/tokenize", json={"prompt": " two"}).json()["tokens"]
    assert tokens[0] == 0, "a text prompt starts with BOS"
    two = tokens[1]
    body = {"prompt": "count", "stop_token_ids": [two]}
    choice = detail_http.post("/v1/completions", json=body).json()["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["stop_reason"] == two
    assert choice["text"] == "one two"


def test_min_tokens_holds_eos_back(detail_http: httpx.Client) -> None:
    body = {"prompt": "count", "min_tokens": 10, "max_tokens": 10}
    data = detail_http.post("/v1/completions", json=body).json()
    assert data["usage"]["completion_tokens"] == 10
    assert data["choices"][0]["text"].startswith("one two three")


def test_continuous_usage_on_completion_streams(detail_http: httpx.Client) -> None:
    body = {
        "prompt": "count",
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    chunks = _chunks(detail_http.post("/v1/completions", json=body))
    running = [c["usage"]["completion_tokens"] for c in chunks if c["choices"]]
    assert running == list(range(1, len(running) + 1))
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == running[-1]


def test_garbage_for_a_nonstreaming_request_is_the_body(detail_http: httpx.Client) -> None:
    response = detail_http.post(
        "/v1/completions",
        json={"prompt": "count"},
        headers={"X-Sim-Fault": "garbage; after_tokens=1"},
    )
    assert response.status_code == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(response.content)


def test_anchored_patterns_match_a_whole_chat_message(detail_http: httpx.Client) -> None:
    scenario = {"match": "^Who wrote it\\?$", "answers": [{"text": "Nobody.", "p": 1}]}
    detail_http.post("/_sim/scenarios", json=[scenario, *SCENARIOS])
    try:
        exact = {"messages": [{"role": "user", "content": "Who wrote it?"}]}
        answer = detail_http.post("/v1/chat/completions", json=exact).json()
        assert answer["choices"][0]["message"]["content"] == "Nobody."
        longer = {"messages": [{"role": "user", "content": "Who wrote it? Be brief."}]}
        other = detail_http.post("/v1/chat/completions", json=longer).json()
        assert other["choices"][0]["message"]["content"] != "Nobody."
    finally:
        detail_http.post("/_sim/scenarios", json=SCENARIOS)
