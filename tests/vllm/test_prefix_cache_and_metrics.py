"""Prefix caching, /metrics and the small endpoints of a real vLLM."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

# vLLM's CPU backend caches prefixes in blocks of 128 tokens.
BLOCK_SIZE = 128
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
GAUGES = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")


def _samples(http: httpx.Client) -> Samples:
    resp = http.get("/metrics")
    assert resp.status_code == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(resp.text)
        for s in family.samples
    }


def _value(samples: Samples, name: str) -> float:
    return sum(value for (sample, _), value in samples.items() if sample == name)


def _finished(samples: Samples, reason: str) -> float:
    return sum(
        value
        for (name, labels), value in samples.items()
        if name == "vllm:request_success_total" and ("finished_reason", reason) in labels
    )


def _long_prompt() -> str:
    # A fresh prefix, so that the first request cannot hit anything cached by other tests.
    return f"{uuid.uuid4().hex} " + "What is the capital of France? " * 40


def test_repeated_long_prompt_hits_prefix_cache(http: httpx.Client) -> None:
    body: dict[str, Any] = {"model": "tiny", "prompt": _long_prompt(), "max_tokens": 2}
    before = _samples(http)
    first = http.post("/v1/completions", json=body).json()["usage"]
    second = http.post("/v1/completions", json=body).json()["usage"]
    after = _samples(http)
    assert first["prompt_tokens"] > 2 * BLOCK_SIZE
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0
    assert cached % BLOCK_SIZE == 0
    assert cached <= second["prompt_tokens"]
    hits = _value(after, "vllm:prefix_cache_hits_total")
    hits -= _value(before, "vllm:prefix_cache_hits_total")
    assert hits >= cached


def test_chat_reports_cached_tokens_too(http: httpx.Client) -> None:
    messages = [{"role": "user", "content": _long_prompt()}]
    body: dict[str, Any] = {"model": "tiny", "messages": messages, "max_tokens": 2}
    http.post("/v1/chat/completions", json=body)
    usage = http.post("/v1/chat/completions", json=body).json()["usage"]
    details = usage["prompt_tokens_details"]
    assert details["cached_tokens"] > 0
    assert details["cached_tokens"] % BLOCK_SIZE == 0
    assert details["created_cache_tokens"] == 0


def test_metrics_has_gauges_and_counts_tokens(http: httpx.Client) -> None:
    before = _samples(http)
    for gauge in GAUGES:
        labelled = [labels for (name, labels), _ in before.items() if name == gauge]
        assert labelled, f"{gauge} missing"
        assert ("model_name", "tiny") in labelled[0]
    assert 0.0 <= _value(before, "vllm:kv_cache_usage_perc") <= 1.0
    body = {"model": "tiny", "prompt": "Hello", "max_tokens": 3, "ignore_eos": True}
    usage = http.post("/v1/completions", json=body).json()["usage"]
    after = _samples(http)

    def grew(name: str) -> float:
        return _value(after, name) - _value(before, name)

    assert grew("vllm:prompt_tokens_total") == usage["prompt_tokens"]
    assert grew("vllm:generation_tokens_total") == 3
    assert _finished(after, "length") - _finished(before, "length") == 1
    assert grew("vllm:e2e_request_latency_seconds_count") == 1


def test_small_endpoints(http: httpx.Client) -> None:
    health = http.get("/health")
    assert (health.status_code, health.content) == (200, b"")
    assert http.get("/version").json() == {"version": "0.32.0"}
    models = http.get("/v1/models").json()
    assert [(m["id"], m["max_model_len"], m["owned_by"]) for m in models["data"]] == [
        ("tiny", 512, "vllm")
    ]
    assert http.get("/load").json() == {"server_load": 0}
