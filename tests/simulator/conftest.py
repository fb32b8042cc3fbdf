"""Simulator fixtures: real `python -m simulator` subprocesses on loopback, one per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess

CAPTURE_LIKE: dict[str, Any] = {
    "model_name": "tiny",
    "max_model_len": 512,
    "timing": {"prefill_ms_per_token": 0.02, "decode_ms_per_token": 1.0},
}


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorProcess]:
    """A simulator configured like the captured vLLM (tiny, 512 tokens, fast timing)."""
    with SimulatorProcess(CAPTURE_LIKE) as process:
        yield process


@pytest.fixture
def http(sim: SimulatorProcess) -> Iterator[httpx.Client]:
    """A plain HTTP client for the module's simulator."""
    with httpx.Client(base_url=sim.base_url, timeout=30.0) as client:
        yield client


@pytest.fixture
def client(sim: SimulatorProcess) -> Iterator[openai.OpenAI]:
    """The official OpenAI SDK pointed at the module's simulator (no retries)."""
    with openai.OpenAI(base_url=f"{sim.base_url}/v1", api_key="sim", max_retries=0) as sdk:
        yield sdk
