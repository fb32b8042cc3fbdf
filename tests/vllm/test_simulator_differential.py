"""The same requests to the real vLLM and to the simulator get responses of the same shape.

The simulator is configured like the real server (model `tiny`, max_model_len 512, prefix
blocks of 128 tokens, no request-id echo). Bodies must have the same keys present and absent,
in the same order, with the same types; errors the same status and the same body; streams the
same chunk shapes per choice. The two models differ, so generated text and numbers do not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.vllm.conftest import parse_sse
from tests.vllm.differential_cases import (
    CASES,
    CHAT,
    CHAT_BASE,
    CMPL,
    CMPL_BASE,
    MESSAGES,
    PROMPT,
    RAW_BODIES,
)
from tests.vllm.wire_shapes import differences, stream_differences

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

SIMULATOR_LIKE_VLLM: dict[str, Any] = {
    "model_name": "tiny",
    "max_model_len": 512,
    "enable_request_id_headers": False,
    "prefix_cache": {"block_size": 128},
    "timing": {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 0.5},
}


@pytest.fixture(scope="module")
def simulator() -> Iterator[httpx.Client]:
    """A simulator configured like scripts/vllm-server's real vLLM."""
    with (
        SimulatorProcess(SIMULATOR_LIKE_VLLM) as sim,
        httpx.Client(base_url=sim.base_url, timeout=60) as client,
    ):
        yield client


def assert_same_protocol(real: httpx.Response, simulated: httpx.Response) -> None:
    """Same status, header names and body shape (errors: the same body)."""
    assert simulated.status_code == real.status_code, simulated.text
    assert set(simulated.headers) - {"date"} == set(real.headers) - {"date"}
    assert simulated.headers.get("content-type") == real.headers.get("content-type")
    if real.status_code >= 400:
        assert simulated.json() == real.json()
        return
    if real.headers["content-type"].startswith("text/event-stream"):
        found = stream_differences(parse_sse(simulated.text), parse_sse(real.text))
    else:
        found = differences(simulated.json(), real.json())
    assert not found, "simulator vs vLLM:\n" + "\n".join(found[:20])


@pytest.mark.parametrize("case", CASES)
def test_same_shape_as_vllm(case: str, http: httpx.Client, simulator: httpx.Client) -> None:
    path, body = CASES[case]
    assert_same_protocol(http.post(path, json=body), simulator.post(path, json=body))


@pytest.mark.parametrize("case", RAW_BODIES)
def test_same_error_for_a_bad_body(case: str, http: httpx.Client, simulator: httpx.Client) -> None:
    path, content = RAW_BODIES[case]
    headers = {"Content-Type": "application/json"}
    real = http.post(path, content=content, headers=headers)
    assert_same_protocol(real, simulator.post(path, content=content, headers=headers))


def _vocabulary_aside(body: dict[str, Any]) -> dict[str, Any]:
    """The error with the server's vocabulary size (what -1 stands for) taken out."""
    error = dict(body["error"])
    error["message"] = re.sub(r"\b\d{3,}\b", "<vocabulary>", error["message"])
    return {"error": error}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": -1}),
        (CHAT, {**CHAT_BASE, "prompt_logprobs": -1}),
        (CMPL, {**CMPL_BASE, "logprobs": -1}),
    ],
    ids=["top_logprobs", "prompt_logprobs", "completion_logprobs"],
)
def test_whole_vocabulary_logprobs_are_refused_alike(
    path: str, body: dict[str, Any], http: httpx.Client, simulator: httpx.Client
) -> None:
    real, simulated = http.post(path, json=body), simulator.post(path, json=body)
    assert (real.status_code, simulated.status_code) == (400, 400)
    assert "which is greater than max allowed: 20" in real.json()["error"]["message"]
    assert _vocabulary_aside(simulated.json()) == _vocabulary_aside(real.json())


# The real model may not end with EOS before its 3rd token, then its EOS (id 2) gets a huge bias;
# the simulator ignores logit_bias and ends unscripted answers with EOS after 8 to 48 tokens.
EOS_ENDING: dict[str, Any] = {
    "model": "tiny",
    "seed": 1,
    "min_tokens": 3,
    "logit_bias": {"2": 100},
    "max_tokens": 60,
}


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("path", [CHAT, CMPL])
def test_eos_ending_alike(
    path: str, stream: bool, http: httpx.Client, simulator: httpx.Client
) -> None:
    body = {**EOS_ENDING, "stream": stream}
    body |= {"messages": MESSAGES, "logprobs": True} if path == CHAT else {"prompt": PROMPT}
    body |= {"logprobs": 0} if path == CMPL else {}
    real, simulated = http.post(path, json=body), simulator.post(path, json=body)
    assert_same_protocol(real, simulated)
    for response in (real, simulated):
        choices = _choices(response, stream)
        finished = [(c["finish_reason"], c.get("stop_reason")) for c in choices[-1:]]
        assert finished == [("stop", None)]
        # EOS is generated: it has a logprob entry (and counts as a token), but no text.
        tokens = [token for choice in choices for token in _logprob_tokens(choice)]
        assert tokens[-1] == "</s>"
        assert "</s>" not in "".join(_text(choice) for choice in choices)
        if not stream:
            assert len(tokens) == response.json()["usage"]["completion_tokens"]


def _choices(response: httpx.Response, stream: bool) -> list[dict[str, Any]]:
    """A one-choice response's choice, or its stream's choice chunks."""
    if not stream:
        choices: list[dict[str, Any]] = response.json()["choices"]
        return choices
    return [choice for event in parse_sse(response.text)[:-1] for choice in event["choices"]]


def _text(choice: dict[str, Any]) -> str:
    if "text" in choice:
        return str(choice["text"])
    return str((choice.get("message") or choice.get("delta") or {}).get("content") or "")


def _logprob_tokens(choice: dict[str, Any]) -> list[str]:
    logprobs = choice.get("logprobs") or {}
    if "content" in logprobs:
        return [entry["token"] for entry in logprobs["content"] or []]
    return list(logprobs.get("tokens") or [])


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("path", [CHAT, CMPL])
def test_stop_string_ending_alike(
    path: str, stream: bool, http: httpx.Client, simulator: httpx.Client
) -> None:
    servers = (http, simulator)
    stops = [_stop_string(server, path) for server in servers]
    responses = [
        server.post(path, json={**_greedy_body(path, 12), "stop": [stop], "stream": stream})
        for server, stop in zip(servers, stops, strict=True)
    ]
    assert_same_protocol(*responses)
    for stop, response in zip(stops, responses, strict=True):
        choices = _choices(response, stream)
        assert (choices[-1]["finish_reason"], choices[-1]["stop_reason"]) == ("stop", stop)
        assert stop not in "".join(_text(choice) for choice in choices)


def _greedy_body(path: str, max_tokens: int) -> dict[str, Any]:
    base = CHAT_BASE if path == CHAT else CMPL_BASE
    return {**base, "max_tokens": max_tokens}


def _stop_string(server: httpx.Client, path: str) -> str:
    """A printable token of the server's greedy answer, first seen where that token starts."""
    probe = {**_greedy_body(path, 12)}
    probe |= {"logprobs": True} if path == CHAT else {"logprobs": 0}
    tokens = _logprob_tokens(server.post(path, json=probe).json()["choices"][0])
    text = tokens[0]
    for token in tokens[1:]:
        printable = token.strip() and token.isascii() and token.isprintable()
        if printable and (text + token).find(token) == len(text):
            return token
        text += token
    raise AssertionError(f"no usable stop string among {tokens!r}")
