"""Deterministic requests reuse their generated output; everything else is generated afresh."""

from __future__ import annotations

from simulator.generation import GeneratedOutput
from simulator.generation_cache import GenerationCache, is_deterministic
from simulator.sampling import SamplingSettings


def _output(text: str) -> GeneratedOutput:
    return GeneratedOutput([1], text, [len(text)], "stop", None, None)


def test_seeded_and_greedy_requests_are_deterministic() -> None:
    assert is_deterministic(SamplingSettings(seed=3))
    assert is_deterministic(SamplingSettings(temperature=0.0))
    assert not is_deterministic(SamplingSettings(temperature=0.7))


def test_hits_reuse_and_misses_generate() -> None:
    cache = GenerationCache(max_entries=2)
    calls: list[str] = []

    def make(text: str) -> GeneratedOutput:
        calls.append(text)
        return _output(text)

    first = cache.get_or_generate("a", lambda: make("a"))
    assert cache.get_or_generate("a", lambda: make("again")) is first
    cache.get_or_generate("b", lambda: make("b"))
    cache.get_or_generate("c", lambda: make("c"))  # evicts "a", the least recently used
    cache.get_or_generate("a", lambda: make("a2"))
    assert calls == ["a", "b", "c", "a2"]
    cache.clear()
    cache.get_or_generate("b", lambda: make("b2"))
    assert calls[-1] == "b2"


def test_repeated_seeded_requests_are_identical_over_http() -> None:
    import httpx

    from simulator.process import SimulatorProcess

    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "tell me something"}],
        "seed": 42,
        "max_tokens": 30,
        "logprobs": True,
        "top_logprobs": 3,
    }
    with SimulatorProcess() as sim:
        url = f"{sim.base_url}/v1/chat/completions"
        first, second = (httpx.post(url, json=body).json() for _ in range(2))
        other = httpx.post(url, json={**body, "seed": 43}).json()
    assert first["choices"] == second["choices"]
    assert first["choices"] != other["choices"]
