"""Errors and context limits on a real vLLM: status, OpenAI error shape, and clamping."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

CHAT = "/v1/chat/completions"
CMPL = "/v1/completions"
MESSAGES: list[Any] = [{"role": "user", "content": "Hi"}]
TOO_LONG = "The quick brown fox jumps over the lazy dog. " * 120
BASE: dict[str, Any] = {"model": "tiny", "messages": MESSAGES, "max_tokens": 2}
CONTEXT_MSG = "This model's maximum context length is 512 tokens."

# (path, body, status, error type, param, a piece of the message)
ERROR_CASES: dict[str, tuple[str, dict[str, Any], int, str, str | None, str]] = {
    "bad_model": (CHAT, {**BASE, "model": "nope"}, 404, "NotFoundError", "model", "`nope`"),
    "validation": (CHAT, {**BASE, "messages": "oops"}, 400, "Bad Request", "body.messages", ""),
    "too_long_chat": (
        CHAT,
        {**BASE, "messages": [{"role": "user", "content": TOO_LONG}]},
        400,
        "BadRequestError",
        "input_tokens",
        CONTEXT_MSG,
    ),
    "too_long_cmpl": (
        CMPL,
        {"model": "tiny", "prompt": TOO_LONG},
        400,
        "BadRequestError",
        "input_tokens",
        CONTEXT_MSG,
    ),
    "max_tokens_over_context": (
        CHAT,
        {**BASE, "max_tokens": 100000},
        400,
        "BadRequestError",
        "max_tokens",
        "cannot be greater than max_model_len=512",
    ),
    "max_tokens_zero": (CHAT, {**BASE, "max_tokens": 0}, 400, "BadRequestError", "max_tokens", ""),
    "top_logprobs_25": (
        CHAT,
        {**BASE, "logprobs": True, "top_logprobs": 25},
        400,
        "BadRequestError",
        "logprobs",
        "greater than max allowed: 20",
    ),
    "top_logprobs_without_logprobs": (
        CHAT,
        {**BASE, "top_logprobs": 2},
        400,
        "BadRequestError",
        "top_logprobs",
        "`logprobs` must be set to true",
    ),
    "stream_options_without_stream": (
        CHAT,
        {**BASE, "stream_options": {"include_usage": True}},
        400,
        "BadRequestError",
        "stream_options",
        "stream=True",
    ),
    "prompt_logprobs_with_stream": (
        CHAT,
        {**BASE, "stream": True, "prompt_logprobs": 1},
        400,
        "BadRequestError",
        "prompt_logprobs",
        "",
    ),
    "n2_greedy": (
        CHAT,
        {**BASE, "n": 2, "temperature": 0},
        400,
        "BadRequestError",
        None,
        "n must be 1 when using greedy sampling",
    ),
    "cmpl_logprobs_25": (
        CMPL,
        {"model": "tiny", "prompt": "Hi", "logprobs": 25},
        400,
        "BadRequestError",
        "logprobs",
        "",
    ),
}


@pytest.mark.parametrize("case", ERROR_CASES, ids=str)
def test_error_is_openai_shaped(http: httpx.Client, case: str) -> None:
    path, body, status, kind, param, message = ERROR_CASES[case]
    resp = http.post(path, json=body)
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"] == "application/json"
    error = resp.json()["error"]
    assert set(resp.json()) == {"error"}
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["param"], error["code"]) == (kind, param, status)
    assert message in error["message"]


def test_malformed_json_is_400(http: httpx.Client) -> None:
    resp = http.post(CHAT, content=b"{not json", headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["type"] == "Bad Request"
    assert "json_invalid" in error["message"]
    assert error["param"].startswith("body")


def test_prompt_plus_max_tokens_over_context_is_clamped(http: httpx.Client) -> None:
    body = {**BASE, "max_tokens": 510, "ignore_eos": True}
    resp = http.post(CHAT, json=body)
    assert resp.status_code == 200, resp.text
    usage = resp.json()["usage"]
    assert usage["total_tokens"] == 512
    assert usage["completion_tokens"] == 512 - usage["prompt_tokens"]
    assert resp.json()["choices"][0]["finish_reason"] == "length"


def test_prompt_filling_the_context_fails_on_clamped_max_tokens(http: httpx.Client) -> None:
    # 511 prompt tokens leave room for one; at 512 the clamp yields max_tokens=0, which is refused
    # as a max_tokens error, not as the too-long-prompt error that 513 tokens get.
    fits = http.post(CMPL, json={"model": "tiny", "prompt": [1] + [45] * 510, "max_tokens": 5})
    assert fits.status_code == 200, fits.text
    assert fits.json()["usage"]["completion_tokens"] == 1
    full = http.post(CMPL, json={"model": "tiny", "prompt": [1] + [45] * 511, "max_tokens": 1})
    assert full.status_code == 400
    error = full.json()["error"]
    assert (error["param"], error["type"]) == ("max_tokens", "BadRequestError")
    assert "max_tokens must be at least 1, got 0" in error["message"]


def test_unknown_fields_are_accepted(http: httpx.Client) -> None:
    resp = http.post(CHAT, json={**BASE, "plumbline_extra": {"a": 1}, "user": "u1"})
    assert resp.status_code == 200, resp.text
