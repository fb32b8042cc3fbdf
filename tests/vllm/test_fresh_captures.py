"""The captures in tests/fixtures/vllm_fresh/ still describe the real server: replay and compare.

Regenerate them with `scripts/vllm-server -- .venv/bin/python tools/tiny_model/capture.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_fresh"
# Objects keyed by token text or token id (completions top_logprobs, prompt_logprobs).
TOKEN_MAPS = ("choices[].logprobs.top_logprobs[]", "choices[].prompt_logprobs[]")
VOLATILE_HEADERS = {"date"}
# 500 greedy tokens of the random-weight model: its near-ties flip with the CPU's kernels (with
# the same vLLM and torch, one machine's text left the capture's at the third token, the same
# way every run), so this capture pins the clamp (usage, finish reason, shape), not the words.
CPU_DEPENDENT_TEXT = {"maxtokens_clamp"}


def _load(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((CAPTURES / f"{name}.json").read_text())
    return record


def _names() -> list[str]:
    return sorted(path.stem for path in CAPTURES.glob("*.json"))


def shape(value: Any, path: str = "") -> Any:
    """Describe a JSON value by its keys and types, not its values."""
    if isinstance(value, dict):
        if path in TOKEN_MAPS:
            return "token-map"
        return {key: shape(item, f"{path}.{key}".lstrip(".")) for key, item in value.items()}
    if isinstance(value, list):
        kinds = {json.dumps(shape(item, f"{path}[]"), sort_keys=True) for item in value}
        return sorted(kinds)
    if value is None:
        return "null"
    return type(value).__name__


def _replay(http: httpx.Client, request: dict[str, Any]) -> httpx.Response:
    return http.request(
        request["method"],
        request["path"],
        json=request.get("json"),
        content=request.get("content"),
        headers=request["headers"],
    )


def test_captures_exist_and_match_the_served_model(http: httpx.Client) -> None:
    names = _names()
    assert {"chat_nonstream_logprobs", "chat_stream_usage_logprobs", "err_too_long_chat"} <= set(
        names
    )
    served = http.get("/v1/models").json()["data"][0]
    for name in names:
        server = _load(name)["server"]
        assert server["version"] == http.get("/version").json()["version"]
        assert server["model_root"] == Path(served["root"]).name, (
            f"{name} was captured from another tiny model; regenerate: {__doc__}"
        )


@pytest.mark.parametrize("name", _names())
def test_replay_matches_capture(http: httpx.Client, name: str) -> None:
    record = _load(name)
    resp = _replay(http, record["request"])
    assert resp.status_code == record["status"]
    assert set(resp.headers) - VOLATILE_HEADERS == set(record["headers"]) - VOLATILE_HEADERS
    assert resp.headers.get("content-type") == record["headers"].get("content-type")
    if "events" in record:
        events = [
            block.removeprefix("data: ") for block in resp.text.split("\n\n") if block.strip()
        ]
        live = [e if e == "[DONE]" else json.loads(e) for e in events]
        # With n > 1 the choices' chunks interleave in no fixed order; each choice's do not.
        assert _per_choice(live) == _per_choice(record["events"])
        return
    body = resp.json() if resp.content else None
    assert shape(body) == shape(record["body"])
    if record["status"] >= 400:
        assert body == record["body"]
    elif body and "choices" in body and name in CPU_DEPENDENT_TEXT:
        assert body["usage"] == record["body"]["usage"]
        finished = [c["finish_reason"] for c in body["choices"]]
        assert finished == [c["finish_reason"] for c in record["body"]["choices"]]
    elif body and "choices" in body:
        assert _texts([body]) == _texts([record["body"]])


def _per_choice(events: list[Any]) -> dict[str, Any]:
    """Per choice index (and for usage chunks and [DONE]): first, distinct and last event shapes,
    and the joined text. A slow reader may get several tokens merged into one chunk, so the
    number of chunks is not compared."""
    grouped: dict[str, list[Any]] = {}
    for event in events:
        choices = event.get("choices") if isinstance(event, dict) else None
        key = str(choices[0]["index"]) if choices else json.dumps(shape(event), sort_keys=True)
        grouped.setdefault(key, []).append(event)
    summary: dict[str, Any] = {}
    for key, group in grouped.items():
        shapes = [json.dumps(shape(event), sort_keys=True) for event in group]
        summary[key] = (shapes[0], sorted(set(shapes)), shapes[-1], "".join(_texts(group)))
    return summary


def _texts(payloads: list[Any]) -> list[str]:
    """The generated text per payload (greedy requests replay it exactly)."""
    out: list[str] = []
    for payload in payloads:
        for choice in payload.get("choices", []) if isinstance(payload, dict) else []:
            delta = choice.get("delta") or choice.get("message") or {}
            out.append(str(choice.get("text", delta.get("content", ""))))
    return out
