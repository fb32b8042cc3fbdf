"""create_app() builds everything per app: usable in-process, no state shared between apps."""

from __future__ import annotations

import httpx
import pytest

from simulator.app import create_app
from simulator.config import SimulatorConfig


def _prompt_tokens_total(text: str) -> float:
    for line in text.splitlines():
        if line.startswith("vllm:prompt_tokens_total{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("vllm:prompt_tokens_total missing")


@pytest.mark.anyio
async def test_two_apps_keep_separate_engines_and_registries() -> None:
    fast = SimulatorConfig(timing={"decode_ms_per_token": 0.0, "prefill_ms_per_token": 0.0})
    first, second = create_app(fast), create_app(fast.model_copy(update={"model_name": "b"}))
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=first), base_url="http://a") as a,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=second), base_url="http://b") as b,
    ):
        body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        response = await a.post("/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert response.json()["model"] == "tiny"
        assert response.json()["usage"]["completion_tokens"] >= 1
        assert _prompt_tokens_total((await a.get("/metrics")).text) > 0
        assert _prompt_tokens_total((await b.get("/metrics")).text) == 0
        missing = await b.post("/v1/chat/completions", json=body)
        assert missing.status_code == 404
