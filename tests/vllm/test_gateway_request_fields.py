"""The gateway reads request fields as the real vLLM does, and confines vLLM's cross-team fields.

Each lax spelling is first sent to vLLM itself, to show how vLLM reads it, then through the
gateway, which must answer the same shape (SSE or JSON, so no 502) or the same 400. The prefix
cache is salted per team: a second team's identical long prompt gets no cached tokens.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.vllm.conftest import parse_sse

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

CHAT, CMPL = "/v1/chat/completions", "/v1/completions"
MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
BASE: dict[str, Any] = {"model": "tiny", "max_tokens": 3, "temperature": 0}
BLOCK_SIZE = 128


def _is_stream(response: httpx.Response) -> bool:
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        events = parse_sse(response.text)
        assert events[-1] == "[DONE]" and len(events) > 1
        return True
    assert response.json()["object"] in ("chat.completion", "text_completion")
    return False


@pytest.fixture(scope="module")
def other_team(vllm_gateway: GatewayProcess, gateway_database: str) -> Iterator[httpx.Client]:
    """A client of a second team on the same gateway."""
    key = issue_key(gateway_database, "vllm-tests-other")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=vllm_gateway.url, headers=headers, timeout=60) as client:
        yield client


@pytest.mark.parametrize("spelling", [True, "yes", "true", "on", "1", 1, 1.0, False, "no", 0])
@pytest.mark.parametrize("path", [CHAT, CMPL])
def test_stream_spellings_get_the_shape_vllm_gives(
    http: httpx.Client, gateway_http: httpx.Client, path: str, spelling: object
) -> None:
    body = {**BASE, "stream": spelling}
    body |= {"messages": MESSAGES} if path == CHAT else {"prompt": "The quick brown"}
    direct = _is_stream(http.post(path, json=body))
    assert _is_stream(gateway_http.post(path, json=body)) is direct


def test_counts_as_strings_are_read_as_vllm_reads_them(
    http: httpx.Client, gateway_http: httpx.Client, calls: CallReader
) -> None:
    body = {**BASE, "messages": MESSAGES, "n": "2", "max_tokens": "3", "seed": 1}
    body |= {"logprobs": "yes", "top_logprobs": 2.0, "temperature": 1.0}
    direct, via = http.post(CHAT, json=body), gateway_http.post(CHAT, json=body)
    assert direct.status_code == via.status_code == 200, via.text
    for response in (direct, via):
        choices = response.json()["choices"]
        assert len(choices) == 2
        assert all(len(t["top_logprobs"]) == 2 for c in choices for t in c["logprobs"]["content"])
    call = calls.wait(via.headers["x-plumbline-call-id"])
    assert (call.n, call.max_tokens) == (2, 3), "recorded as vLLM read them"


@pytest.mark.parametrize(
    ("field", "value"),
    [("stream", "maybe"), ("n", "two"), ("max_tokens", 2.5), ("top_logprobs", "2")],
)
def test_values_vllm_refuses_are_refused_alike(
    http: httpx.Client, gateway_http: httpx.Client, calls: CallReader, field: str, value: object
) -> None:
    body = {**BASE, "messages": MESSAGES, "logprobs": True, field: value}
    direct, via = http.post(CHAT, json=body), gateway_http.post(CHAT, json=body)
    assert direct.status_code == via.status_code == 400, (direct.text, via.text)
    assert direct.json()["error"]["param"] == via.json()["error"]["param"]
    call = calls.wait(via.headers["x-plumbline-call-id"])
    assert call.status_code == 400 and call.backend is None, "refused before vLLM was asked"


def _long_chat() -> dict[str, Any]:
    # A fresh prefix of more than two cache blocks that no other test sent.
    text = f"{uuid.uuid4().hex} " + "What is the capital of France? " * 40
    return {**BASE, "max_tokens": 2, "messages": [{"role": "user", "content": text}]}


def _cached(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    assert usage["prompt_tokens"] > 2 * BLOCK_SIZE
    return int(usage["prompt_tokens_details"]["cached_tokens"] or 0)


def test_teams_do_not_share_vllms_prefix_cache(
    gateway_http: httpx.Client, other_team: httpx.Client
) -> None:
    body = _long_chat()
    assert _cached(gateway_http.post(CHAT, json=body)) == 0
    assert _cached(gateway_http.post(CHAT, json=body)) >= BLOCK_SIZE, "the team's own hits"
    assert _cached(other_team.post(CHAT, json=body)) == 0
    # The same salt named by both teams does not join their caches either.
    salted = {**_long_chat(), "cache_salt": "both-teams"}
    assert _cached(gateway_http.post(CHAT, json=salted)) == 0
    assert _cached(gateway_http.post(CHAT, json=salted)) >= BLOCK_SIZE
    assert _cached(other_team.post(CHAT, json=salted)) == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("priority", -1),
        ("kv_transfer_params", {"do_remote_prefill": True, "remote_host": "127.0.0.1"}),
        ("vllm_xargs", {"extension": 1}),
        ("request_id", "someone-else"),
    ],
)
def test_cross_team_fields_vllm_would_act_on_are_refused(
    http: httpx.Client, gateway_http: httpx.Client, field: str, value: object
) -> None:
    body = {**BASE, "messages": MESSAGES, field: value}
    assert http.post(CHAT, json=body).status_code == 200, "vLLM itself acts on the field"
    refused = gateway_http.post(CHAT, json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["param"] == field
