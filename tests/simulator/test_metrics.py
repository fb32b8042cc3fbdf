"""/metrics has vLLM's families, types, labels and buckets, with values from real traffic."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from simulator.process import SimulatorProcess
from tests.simulator.capture_files import CAPTURES, load


@pytest.fixture(scope="module")
def metered() -> Iterator[SimulatorProcess]:
    config = {"max_model_len": 512, "timing": {"decode_ms_per_token": 1.0}}
    with SimulatorProcess(config) as sim:
        yield sim


def _samples(text: str) -> dict[str, list[Sample]]:
    families: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            families.setdefault(sample.name, []).append(sample)
    return families


def _value(sim: SimulatorProcess, name: str, **labels: str) -> float:
    for sample in _samples(sim.metrics_text()).get(name, []):
        if all(sample.labels.get(k) == v for k, v in labels.items()):
            return float(sample.value)
    raise AssertionError(f"{name} {labels} not exposed")


def _types(text: str) -> set[tuple[str, str]]:
    pairs = set()
    for line in text.splitlines():
        if line.startswith("# TYPE vllm:"):
            _, _, name, kind = line.split(" ")
            pairs.add((name, kind))
    return pairs


def test_families_and_types_match_the_capture(metered: SimulatorProcess) -> None:
    response = metered.client.get("/metrics")
    assert response.headers["content-type"] == load("metrics_full.txt").headers["content-type"]
    captured = {
        tuple(line.split(" "))
        for line in (CAPTURES / "metrics_types.txt").read_text().splitlines()
        if line.strip()
    }
    assert _types(response.text) == captured


def test_label_names_and_buckets_match_the_capture(metered: SimulatorProcess) -> None:
    metered.client.post("/v1/completions", json={"prompt": "warm up", "max_tokens": 2})
    ours = _samples(metered.metrics_text())
    theirs = _samples(load("metrics_full.txt").body)
    for name, samples in theirs.items():
        if not name.startswith("vllm:"):
            continue
        assert name in ours, name
        assert {frozenset(s.labels) for s in ours[name]} == {
            frozenset(s.labels) for s in samples
        }, name
        if name.endswith("_bucket"):
            assert [s.labels["le"] for s in ours[name]] == [s.labels["le"] for s in samples]
    info = ours["vllm:cache_config_info"][0].labels
    assert info["block_size"] == "16"
    assert info["engine"] == "0"


def test_counters_follow_traffic(metered: SimulatorProcess) -> None:
    before = {
        name: _value(metered, name, model_name="tiny", engine="0")
        for name in (
            "vllm:prompt_tokens_total",
            "vllm:generation_tokens_total",
            "vllm:e2e_request_latency_seconds_count",
            "vllm:prefix_cache_queries_total",
            "vllm:prefix_cache_hits_total",
            "vllm:inter_token_latency_seconds_count",
        )
    }
    lengths = _value(metered, "vllm:request_success_total", finished_reason="length")
    prompt = "Counting context. " * 30
    usages = []
    with httpx.Client(base_url=metered.base_url, timeout=30.0) as http:
        for _ in range(2):
            body = {"prompt": prompt, "max_tokens": 5, "ignore_eos": True}
            usages.append(http.post("/v1/completions", json=body).json()["usage"])
    prompt_tokens = sum(u["prompt_tokens"] for u in usages)
    cached = sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages)
    assert cached > 0

    def grew(name: str) -> float:
        return _value(metered, name, model_name="tiny", engine="0") - before[name]

    assert grew("vllm:prompt_tokens_total") == prompt_tokens
    assert grew("vllm:generation_tokens_total") == 10
    assert grew("vllm:e2e_request_latency_seconds_count") == 2
    assert grew("vllm:inter_token_latency_seconds_count") == 8  # 4 gaps between 5 tokens, x2
    assert grew("vllm:prefix_cache_queries_total") == prompt_tokens
    assert grew("vllm:prefix_cache_hits_total") == cached
    assert _value(metered, "vllm:request_success_total", finished_reason="length") == lengths + 2


def test_running_gauge_sees_a_request_in_flight(metered: SimulatorProcess) -> None:
    metered.set_timing({"decode_ms_per_token": 20.0})
    body = {
        "messages": [{"role": "user", "content": "go"}],
        "max_tokens": 100,
        "ignore_eos": True,
        "stream": True,
    }
    try:
        with (
            httpx.Client(base_url=metered.base_url, timeout=30.0) as http,
            http.stream("POST", "/v1/chat/completions", json=body) as response,
        ):
            lines = response.iter_lines()  # held: dropping it would close the stream
            next(line for line in lines if line)
            assert _value(metered, "vllm:num_requests_running", model_name="tiny") == 1
            assert _value(metered, "vllm:kv_cache_usage_perc", model_name="tiny") > 0
    finally:
        metered.set_timing({"decode_ms_per_token": 1.0})
