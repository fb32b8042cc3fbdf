"""Through the gateway to the real vLLM: context limits, the prefix cache and the load gauges.

Context errors reach the client as vLLM wrote them and are recorded; prefix-cache hits are
recorded as cached tokens; the gauges the gateway scrapes from vLLM's /metrics show up per
backend in the gateway's own /metrics.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.routing.health import parse_engine_gauges
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

MAX_MODEL_LEN = 512  # scripts/vllm-server --max-model-len
BLOCK_SIZE = 128  # vLLM's CPU backend caches prefixes in blocks of 128 tokens
TOO_LONG = "The quick brown fox jumps over the lazy dog. " * 120
CALL_ID = "x-plumbline-call-id"
GAUGES = {"running", "waiting", "kv_cache_usage"}
BUSY_STREAMS = 2


@pytest.fixture(scope="module")
def vllm_gateway(vllm_server: str, gateway_database: str) -> Iterator[GatewayProcess]:
    """This module's gateway scrapes its backend every 0.1 s."""
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
    # With vLLM idle, the gateway's copy of its gauges soon equals vLLM's own /metrics page.
    own = parse_engine_gauges(http.get("/metrics").text)
    assert set(own) == GAUGES
    wait_until(
        lambda: _engine_gauges(gateway_http, vllm_server) == (1.0, own),
        timeout=20,
        what=f"the gateway showing vLLM's own gauges {own}",
    )


def test_engine_gauges_of_a_busy_vllm(http: httpx.Client) -> None:
    # What the gateway's scraper reads from vLLM's page while it generates. (Not through the
    # gateway: on a small CPU box a busy vLLM starves every other process for seconds.)
    stop = threading.Event()
    generating = threading.Semaphore(0)
    workers = [
        threading.Thread(target=_keep_busy, args=(http.base_url, stop, generating))
        for _ in range(BUSY_STREAMS)
    ]
    for worker in workers:
        worker.start()
    seen: list[dict[str, float]] = []

    def running() -> bool:
        seen.append(parse_engine_gauges(http.get("/metrics").text))
        return seen[-1]["running"] >= 1

    try:
        # Both streams have sent tokens, so vLLM has stepped with them running; two streams
        # restarting on their own leave no moment with none running but the rare joint gap.
        for _ in workers:
            assert generating.acquire(timeout=120), "vLLM never streamed a token"
        wait_until(running, timeout=120, what="vLLM's page showing a running request")
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    assert seen[-1]["kv_cache_usage"] > 0, seen[-1]
    assert seen[-1]["waiting"] >= 0


def _keep_busy(base_url: httpx.URL, stop: threading.Event, generating: threading.Semaphore) -> None:
    # Streams of 400 tokens, one after another until told to stop; the first token of the
    # first stream is signalled.
    body = {"model": "tiny", "prompt": "Hi", "max_tokens": 400, "ignore_eos": True, "stream": True}
    signalled = False
    with httpx.Client(base_url=base_url, timeout=120) as client:
        while not stop.is_set():
            with client.stream("POST", "/v1/completions", json=body) as response:
                for _ in response.iter_lines():
                    if not signalled:
                        signalled = True
                        generating.release()
                    if stop.is_set():
                        break
