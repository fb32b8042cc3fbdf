"""The gateway is invisible: same seeded requests give the same bodies and SSE events as vLLM."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.support.gateway_process import GatewayProcess

pytestmark = pytest.mark.xdist_group("gateway-e2e")
MESSAGES = [{"role": "user", "content": "What is the indemnity cap in this contract?"}]
PROMPT = "Hello world! The quick brown fox"

CHAT_CASES: list[dict[str, Any]] = [
    {"messages": MESSAGES, "seed": 1},
    {"messages": MESSAGES, "seed": 2, "logprobs": True, "top_logprobs": 2},
    {"messages": MESSAGES, "seed": 3, "logprobs": True},
    {"messages": MESSAGES, "seed": 4, "logprobs": True, "top_logprobs": 8},
    {"messages": MESSAGES, "seed": 5, "n": 2, "max_tokens": 6},
    {"messages": [{"role": "user", "content": "Say anything."}], "seed": 6, "stop": ["the"]},
    {"messages": MESSAGES, "seed": 7, "stream": True},
    {"messages": MESSAGES, "seed": 8, "stream": True, "stream_options": {"include_usage": True}},
    {
        "messages": MESSAGES,
        "seed": 9,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    },
    {"messages": MESSAGES, "seed": 10, "stream": True, "logprobs": True, "top_logprobs": 3},
    {"messages": MESSAGES, "seed": 11, "stream": True, "n": 2, "max_tokens": 5},
    {"messages": MESSAGES, "stream_options": {"include_usage": True}},
    {"messages": "oops"},
    {"messages": MESSAGES, "top_logprobs": 3},
    {"messages": MESSAGES, "logprobs": True, "top_logprobs": 25},
]
COMPLETION_CASES: list[dict[str, Any]] = [
    {"prompt": PROMPT, "seed": 1, "max_tokens": 8},
    {"prompt": PROMPT, "seed": 2, "max_tokens": 8, "logprobs": 1},
    {"prompt": PROMPT, "seed": 3, "max_tokens": 4, "echo": True, "logprobs": 2},
    {"prompt": PROMPT, "seed": 4, "max_tokens": 8, "stream": True},
    {"prompt": PROMPT, "seed": 5, "max_tokens": 8, "stream": True, "logprobs": 0},
    {"prompt": PROMPT, "seed": 6, "max_tokens": 100000},
]
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


def _events(body: bytes) -> list[Any]:
    parts = [p for p in body.split(b"\n\n") if p]
    return [p if p == b"data: [DONE]" else _mask(orjson.loads(p[6:])) for p in parts]


def _call(base: str, path: str, case: dict[str, Any], key: str | None) -> tuple[int, Any, bytes]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = httpx.post(
        f"{base}{path}", json={"model": "tiny", **case}, headers=headers, timeout=30
    )
    return response.status_code, response.headers.get("content-type"), response.content


@pytest.mark.parametrize(
    ("path", "case"),
    [("/v1/chat/completions", c) for c in CHAT_CASES]
    + [("/v1/completions", c) for c in COMPLETION_CASES],
)
def test_same_response_with_and_without_the_gateway(
    path: str,
    case: dict[str, Any],
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    team_key: str,
) -> None:
    simulator.reset()  # an empty prefix cache for both calls
    status, ctype, direct = _call(simulator.base_url, path, case, None)
    simulator.reset()
    via_status, via_ctype, via = _call(gateway.url, path, case, team_key)
    assert (via_status, via_ctype) == (status, ctype)
    if case.get("stream") and status == 200:
        assert _events(via) == _events(direct)
    else:
        assert _mask(orjson.loads(via)) == _mask(orjson.loads(direct))
