"""Without vLLM's extra flags: no per-request metrics, no prompt token details, no id header."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import load, sse_payloads
from tests.simulator.json_shapes import assert_same_shape

HELLO = [{"role": "user", "content": "Hello world!"}]


@pytest.fixture(scope="module")
def plain_http() -> Iterator[httpx.Client]:
    config = {
        "max_model_len": 512,
        "enable_per_request_metrics": False,
        "enable_prompt_tokens_details": False,
        "enable_request_id_headers": False,
        "timing": {"decode_ms_per_token": 1.0},
    }
    with (
        SimulatorProcess(config) as sim,
        httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
    ):
        yield http


def test_nonstream_matches_default_capture(plain_http: httpx.Client) -> None:
    body = {"messages": HELLO, "max_tokens": 2, "ignore_eos": True}
    response = plain_http.post("/v1/chat/completions", json=body, headers={"X-Request-Id": "abc"})
    capture = load("default_chat_nonstream.txt")
    assert set(response.headers) - {"date"} == set(capture.headers) - {"date"}
    data = response.json()
    assert_same_shape(data, capture.json())
    assert data["id"] == "chatcmpl-abc"
    assert data["metrics"] is None
    assert data["usage"]["prompt_tokens_details"] is None


def test_stream_usage_matches_default_capture(plain_http: httpx.Client) -> None:
    body = {
        "messages": HELLO,
        "max_tokens": 2,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    ours = sse_payloads(plain_http.post("/v1/chat/completions", json=body).text)
    theirs = load("default_chat_stream_usage.txt").events()
    assert len(ours) == len(theirs)
    for mine, captured in zip(ours[:-1], theirs[:-1], strict=True):
        assert_same_shape(orjson.loads(mine), orjson.loads(captured))
