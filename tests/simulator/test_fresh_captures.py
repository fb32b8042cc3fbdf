"""Replay the requests recorded against a real vLLM 0.32 (tests/fixtures/vllm_fresh) here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import FRESH, sse_payloads
from tests.simulator.json_shapes import assert_same_shape

NAMES = sorted(path.stem for path in FRESH.glob("*.json"))


@pytest.fixture(scope="module")
def fresh_http() -> Iterator[httpx.Client]:
    """Configured like the server that produced the fresh captures (no request-id flag)."""
    config = {
        "max_model_len": 512,
        "enable_request_id_headers": False,
        "timing": {"decode_ms_per_token": 1.0},
        # cmpl_stop asks to stop at " 1": script an answer that reaches it.
        "scenarios": [{"match": "^The quick brown$", "answers": [{"text": " fox 1 2", "p": 1}]}],
    }
    with (
        SimulatorProcess(config) as sim,
        httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
    ):
        yield http


def _record(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((FRESH / f"{name}.json").read_text())
    return record


def _by_choice(payloads: list[str]) -> dict[int, list[Any]]:
    """Chunks grouped by choice index (-1: chunks without choices); order within a choice kept."""
    groups: dict[int, list[Any]] = {}
    for payload in payloads[:-1]:
        chunk = orjson.loads(payload)
        index = chunk["choices"][0]["index"] if chunk["choices"] else -1
        groups.setdefault(index, []).append(chunk)
    return groups


def test_fresh_captures_are_present() -> None:
    assert {"chat_n2_stream_usage", "err_n2_greedy", "err_context_full"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_replayed_request_matches(fresh_http: httpx.Client, name: str) -> None:
    record = _record(name)
    request = record["request"]
    response = fresh_http.request(
        request["method"],
        request["path"],
        json=request.get("json"),
        content=request.get("content"),
        headers=request["headers"],
    )
    assert response.status_code == record["status"]
    assert set(response.headers) - {"date"} == set(record["headers"]) - {"date"}
    assert response.headers.get("content-type") == record["headers"].get("content-type")
    if record["status"] >= 400:
        assert response.json() == record["body"]
        return
    if not record["text"]:
        assert response.content == b""
        return
    if response.headers["content-type"].startswith("text/event-stream"):
        ours, theirs = sse_payloads(response.text), sse_payloads(record["text"])
        assert ours[-1] == theirs[-1] == "[DONE]"
        mine, captured = _by_choice(ours), _by_choice(theirs)
        assert sorted(mine) == sorted(captured)
        for index, chunks in captured.items():
            assert len(mine[index]) == len(chunks)
            for our_chunk, their_chunk in zip(mine[index], chunks, strict=True):
                assert_same_shape(our_chunk, their_chunk)
        return
    assert_same_shape(response.json(), orjson.loads(record["text"]))
