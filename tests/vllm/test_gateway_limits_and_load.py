"""Through the gateway to the real vLLM: context limits, the prefix cache and the load gauges.

Context errors reach the client as vLLM wrote them and are recorded; prefix-cache hits are
recorded as cached tokens; the gauges the gateway scrapes from vLLM's /metrics show up per
backend in the gateway's own /metrics.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, gateway_config

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

MAX_MODEL_LEN = 512  # scripts/vllm-server --max-model-len
BLOCK_SIZE = 128  # vLLM's CPU backend caches prefixes in blocks of 128 tokens
TOO_LONG = "The quick brown fox jumps over the lazy dog. " * 120
CALL_ID = "x-plumbline-call-id"
GAUGES = {
    "running": "vllm:num_requests_running",
    "waiting": "vllm:num_requests_waiting",
    "kv_cache_usage": "vllm:kv_cache_usage_perc",
}


@pytest.fixture(scope="module")
def vllm_gateway(vllm_server: str, gateway_database: str) -> Iterator[GatewayProcess]:
    """This module's gateway scrapes its backend every 0.1 s, to see a request in flight."""
    config = gateway_config(vllm_server, health={"interval_s": 0.1, "timeout_s": 1.0})
    gateway = GatewayProcess(config, gateway_database)
    with gateway:
        yield gateway


ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat_prompt_too_long": (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": TOO_LONG}], "max_tokens": 2},
    ),
    "completion_prompt_too_long": ("/v1/completions", {"prompt": TOO_LONG, "max_tokens": 2}),
    "max_tokens_over_context": (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 100000},
    ),
    "stream_prompt_too_long": (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": TOO_LONG}], "stream": True},
    ),
}


@pytest.mark.parametrize("case", ERRORS)
def test_context_errors_pass_through_and_are_recorded(
    case: str, http: httpx.Client, gateway_http: httpx.Client, calls: CallReader
) -> None:
    path, body = ERRORS[case]
    direct = http.post(path, json={"model": "tiny", **body})
    via = gateway_http.post(path, json={"model": "tiny", **body})
    assert (via.status_code, direct.status_code) == (400, 400)
    assert via.json() == direct.json()
    error = direct.json()["error"]
    assert error["type"] == "BadRequestError"
    assert str(MAX_MODEL_LEN) in error["message"]
    row = calls.wait(via.headers[CALL_ID])
    assert (row.status_code, row.error_type, row.error_message) == (
        400,
        "BadRequestError",
        error["message"],
    )
    assert (row.prompt_tokens, row.completion_tokens) == (None, None)


def test_sdk_sees_the_context_error(gateway_client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        gateway_client.completions.create(model="tiny", prompt=TOO_LONG, max_tokens=2)
    assert f"maximum context length is {MAX_MODEL_LEN} tokens" in raised.value.message


def test_clamped_max_tokens_recorded_as_generated(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    raw = gateway_client.chat.completions.with_raw_response.create(
        model="tiny",
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=510,
        extra_body={"ignore_eos": True},
    )
    usage = raw.http_response.json()["usage"]
    assert usage["total_tokens"] == MAX_MODEL_LEN
    row = calls.wait(raw.headers[CALL_ID])
    assert row.max_tokens == 510, "the row keeps what the client asked for"
    assert row.completion_tokens == MAX_MODEL_LEN - usage["prompt_tokens"]
    assert row.finish_reason == "length"


def test_repeated_long_prompt_records_cached_tokens(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    # A fresh prefix, so the first call cannot hit blocks cached by other tests.
    prompt = f"{uuid.uuid4().hex} " + "What is the capital of France? " * 40
    rows = []
    for _ in range(2):
        raw = gateway_client.completions.with_raw_response.create(
            model="tiny", prompt=prompt, max_tokens=2
        )
        row = calls.wait(raw.headers[CALL_ID])
        details = raw.http_response.json()["usage"]["prompt_tokens_details"]
        assert row.cached_tokens == details["cached_tokens"]
        rows.append(row)
    first, second = rows
    assert first.prompt_tokens is not None and first.prompt_tokens > 2 * BLOCK_SIZE
    assert first.cached_tokens == 0
    assert second.cached_tokens is not None and second.cached_tokens > 0
    assert second.cached_tokens % BLOCK_SIZE == 0
    assert second.engine_prefill_ms is not None


def _engine_gauges(gateway: httpx.Client, backend: str) -> tuple[float | None, dict[str, float]]:
    """`plumbline_backend_up` and the scraped engine gauges of one backend of `tiny`."""
    up: float | None = None
    gauges: dict[str, float] = {}
    families = text_string_to_metric_families(gateway.get("/metrics").text)
    for sample in (s for family in families for s in family.samples):
        if sample.labels.get("model") != "tiny" or sample.labels.get("backend") != backend:
            continue
        if sample.name == "plumbline_backend_up":
            up = sample.value
        elif sample.name == "plumbline_backend_engine":
            gauges[sample.labels["gauge"]] = sample.value
    return up, gauges


def test_gateway_metrics_show_the_backends_engine_gauges(
    vllm_server: str, gateway_http: httpx.Client, http: httpx.Client
) -> None:
    up, gauges = _engine_gauges(gateway_http, vllm_server)
    assert up == 1.0
    assert set(gauges) == set(GAUGES)
    assert 0.0 <= gauges["kv_cache_usage"] <= 1.0
    assert http.get("/metrics").text.count("vllm:num_requests_running{") == 1

    # While vLLM is kept busy, a scrape soon shows requests running; afterwards, idle again.
    busy = threading.Event()
    worker = threading.Thread(target=_keep_busy, args=(http, busy))
    worker.start()
    try:
        running = _wait_for_gauge(gateway_http, vllm_server, lambda g: g["running"] >= 1)
    finally:
        busy.set()
        worker.join()
    assert running["kv_cache_usage"] > 0
    assert _wait_for_gauge(gateway_http, vllm_server, lambda g: g["running"] == 0)["waiting"] == 0


def _keep_busy(http: httpx.Client, stop: threading.Event) -> None:
    # Each call generates 4 x 500 tokens (about half a second here); repeat until told to stop.
    body = {"model": "tiny", "prompt": "Hi", "max_tokens": 500, "n": 4, "seed": 1}
    while not stop.is_set():
        http.post("/v1/completions", json={**body, "ignore_eos": True})


def _wait_for_gauge(
    gateway: httpx.Client, backend: str, condition: Callable[[dict[str, float]], bool]
) -> dict[str, float]:
    """The backend's engine gauges once they meet `condition` (fails after 20 s)."""
    deadline = time.monotonic() + 20
    gauges = _engine_gauges(gateway, backend)[1]
    while not condition(gauges):
        assert time.monotonic() < deadline, f"gauges stuck at {gauges}"
        time.sleep(0.02)
        gauges = _engine_gauges(gateway, backend)[1]
    return gauges
