"""The simulator's bodies, chunks and headers have the shape of the captured vLLM 0.32 ones."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import load, sse_payloads
from tests.simulator.json_shapes import assert_same_shape

HELLO = [{"role": "user", "content": "Hello world!"}]
LONG_PROMPT = "The quick brown fox jumps over the lazy dog. " * 120
STOP_SCENARIO = {"match": "stop demo", "answers": [{"text": "alpha beta gamma delta", "p": 1.0}]}

# capture file -> (path, request body, extra headers)
BODIES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "chat_n2.json": (
        "/v1/chat/completions",
        {"messages": HELLO, "max_tokens": 2, "n": 2, "seed": 7, "ignore_eos": True},
        {},
    ),
    "chat_nonstream_logprobs.txt": (
        "/v1/chat/completions",
        {"messages": HELLO, "max_tokens": 4, "logprobs": True, "top_logprobs": 3},
        {"X-Request-Id": "my-req-123"},
    ),
    "chat_nonstream_plain.json": (
        "/v1/chat/completions",
        {"messages": HELLO, "max_tokens": 3, "ignore_eos": True},
        {},
    ),
    "chat_prompt_logprobs.json": (
        "/v1/chat/completions",
        {"messages": HELLO, "max_tokens": 1, "prompt_logprobs": 1},
        {},
    ),
    "chat_tokids.json": (
        "/v1/chat/completions",
        {
            "messages": HELLO,
            "max_tokens": 2,
            "ignore_eos": True,
            "logprobs": True,
            "top_logprobs": 1,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
        },
        {},
    ),
    "cmpl_echo_logprobs.json": (
        "/v1/completions",
        {"prompt": "Hello world!", "max_tokens": 2, "logprobs": 1, "echo": True},
        {},
    ),
    "cmpl_nonstream_logprobs.json": (
        "/v1/completions",
        {"prompt": "Hello world!", "max_tokens": 3, "logprobs": 2, "ignore_eos": True},
        {},
    ),
    "cmpl_stop.json": (
        "/v1/completions",
        {"prompt": "stop demo", "max_tokens": 30, "stop": [" gamma"]},
        {},
    ),
    "err_priority.txt": ("/v1/chat/completions", {"messages": HELLO, "priority": 5}, {}),
    "maxtokens_500_clamp.txt": (
        "/v1/chat/completions",
        {"messages": HELLO, "max_tokens": 500, "ignore_eos": True},
        {},
    ),
}

STREAMS: dict[str, dict[str, Any]] = {
    "chat_stream_continuous.txt": {
        "messages": HELLO,
        "max_tokens": 2,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    },
    "chat_stream_nousage.txt": {
        "messages": HELLO,
        "max_tokens": 2,
        "ignore_eos": True,
        "stream": True,
    },
    "chat_stream_usage_logprobs.txt": {
        "messages": HELLO,
        "max_tokens": 3,
        "ignore_eos": True,
        "logprobs": True,
        "top_logprobs": 2,
        "stream": True,
        "stream_options": {"include_usage": True},
    },
}

ERRORS: dict[str, tuple[str, Any]] = {
    "err_bad_model.txt": ("/v1/chat/completions", {"model": "nope", "messages": HELLO}),
    "err_badjson.txt": ("/v1/chat/completions", b"not json"),
    "err_stream_options_no_stream.txt": (
        "/v1/chat/completions",
        {"messages": HELLO, "stream_options": {"include_usage": True}},
    ),
    "err_too_long_chat.txt": (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": LONG_PROMPT}], "max_tokens": 4},
    ),
    "err_too_long_cmpl.txt": ("/v1/completions", {"prompt": LONG_PROMPT, "max_tokens": 3}),
    "err_top_logprobs_25.txt": (
        "/v1/chat/completions",
        {"messages": HELLO, "logprobs": True, "top_logprobs": 25},
    ),
    "err_top_logprobs_without_logprobs.txt": (
        "/v1/chat/completions",
        {"messages": HELLO, "top_logprobs": 2},
    ),
    "err_validation.txt": ("/v1/chat/completions", {"messages": "oops"}),
    "maxtokens_huge.txt": ("/v1/chat/completions", {"messages": HELLO, "max_tokens": 100000}),
}


@pytest.fixture(scope="module", autouse=True)
def _stop_scenario(sim: SimulatorProcess) -> None:
    sim.set_scenarios([STOP_SCENARIO])


def _post(http: httpx.Client, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    if isinstance(body, bytes):
        return http.post(path, content=body, headers={"content-type": "application/json"})
    return http.post(path, json=body, headers=headers)


def _assert_headers(response: httpx.Response, name: str) -> None:
    capture = load(name)
    if capture.status is None:
        return
    assert response.status_code == capture.status
    assert set(response.headers) - {"date"} == set(capture.headers) - {"date"}
    for header in ("server", "content-type", "vary"):
        assert response.headers.get(header) == capture.headers.get(header), header


@pytest.mark.parametrize("name", sorted(BODIES))
def test_body_matches_capture(http: httpx.Client, name: str) -> None:
    path, body, headers = BODIES[name]
    response = _post(http, path, body, headers)
    _assert_headers(response, name)
    assert response.status_code == 200
    assert_same_shape(response.json(), load(name).json())


def test_request_id_header_names_the_response(http: httpx.Client) -> None:
    path, body, headers = BODIES["chat_nonstream_logprobs.txt"]
    response = _post(http, path, body, headers)
    assert response.json()["id"] == "chatcmpl-my-req-123"
    assert response.headers["x-request-id"] == "my-req-123"
    plain = http.post("/v1/completions", json={"prompt": "x", "max_tokens": 1})
    assert len(plain.headers["x-request-id"]) == 32
    assert plain.json()["id"].startswith("cmpl-")
    assert plain.json()["id"] != f"cmpl-{plain.headers['x-request-id']}"


def test_stop_reason_and_clamp_values(http: httpx.Client) -> None:
    stopped = _post(http, *BODIES["cmpl_stop.json"][:2], {}).json()["choices"][0]
    assert (stopped["text"], stopped["finish_reason"], stopped["stop_reason"]) == (
        "alpha beta",
        "stop",
        " gamma",
    )
    clamped = _post(http, *BODIES["maxtokens_500_clamp.txt"][:2], {}).json()
    assert clamped["usage"]["total_tokens"] == 512
    assert clamped["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream_events_match_capture(http: httpx.Client, name: str) -> None:
    response = http.post("/v1/chat/completions", json=STREAMS[name])
    _assert_headers(response, name)
    ours = sse_payloads(response.text)
    theirs = load(name).events()
    assert ours[-1] == theirs[-1] == "[DONE]"
    assert len(ours) == len(theirs)
    for mine, captured in zip(ours[:-1], theirs[:-1], strict=True):
        assert_same_shape(orjson.loads(mine), orjson.loads(captured))


def test_completion_stream_matches_capture(http: httpx.Client) -> None:
    body = {
        "prompt": "Hello world!",
        "max_tokens": 3,
        "ignore_eos": True,
        "logprobs": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    ours = sse_payloads(http.post("/v1/completions", json=body).text)
    theirs = load("cmpl_stream_usage.txt").events()
    assert len(ours) == len(theirs)
    for mine, captured in zip(ours[:-1], theirs[:-1], strict=True):
        assert_same_shape(orjson.loads(mine), orjson.loads(captured))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_capture_exactly(http: httpx.Client, name: str) -> None:
    path, body = ERRORS[name]
    response = _post(http, path, body, {})
    _assert_headers(response, name)
    assert response.json() == load(name).json()


@pytest.mark.parametrize(
    ("name", "path", "method", "body"),
    [
        ("health.txt", "/health", "GET", None),
        ("ping.txt", "/ping", "GET", None),
        ("load.txt", "/load", "GET", None),
        ("version.txt", "/version", "GET", None),
        ("models.txt", "/v1/models", "GET", None),
        ("tokenize_prompt.txt", "/tokenize", "POST", {"prompt": "Hello world!"}),
        (
            "tokenize_chat.txt",
            "/tokenize",
            "POST",
            {"messages": HELLO, "return_token_strs": True},
        ),
        ("detokenize.txt", "/detokenize", "POST", {"tokens": [0, 44, 67, 74]}),
    ],
)
def test_server_endpoint_matches_capture(
    http: httpx.Client, name: str, path: str, method: str, body: Any
) -> None:
    response = http.request(method, path, json=body)
    _assert_headers(response, name)
    capture = load(name)
    if not capture.body.strip():
        assert response.content == b""
        return
    assert_same_shape(response.json(), capture.json())
    if name in ("version.txt", "load.txt"):
        assert response.json() == capture.json()
    if name == "models.txt":
        assert response.json()["data"][0]["max_model_len"] == 512


def test_tokenize_uses_gpt2_token_strings(http: httpx.Client) -> None:
    chat = http.post("/tokenize", json={"messages": HELLO, "return_token_strs": True}).json()
    assert chat["token_strs"][0] == "<s>"
    assert "Ġworld" in chat["token_strs"]
    assert "Ċ" in chat["token_strs"]
    assert chat["count"] == len(chat["tokens"])
    detok = http.post("/detokenize", json={"tokens": chat["tokens"]}).json()
    assert detok == {"prompt": "<s><|user|>Hello world!\n<|assistant|>"}
