"""End to end: the official SDK through a real gateway to the simulator; every call recorded."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess

pytestmark = pytest.mark.xdist_group("gateway-e2e")
INDEMNITY_Q = [{"role": "user", "content": "What is the indemnity cap in this contract?"}]


def test_chat_call_is_recorded_with_usage_engine_metrics_and_attribution(
    client: openai.OpenAI, calls: CallReader
) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny",
        messages=INDEMNITY_Q,
        seed=7,
        temperature=0.8,
        top_p=0.95,
        max_tokens=40,
        extra_headers={"X-Plumbline-Feature": "contracts", "X-Plumbline-User": "user-17"},
    )
    body: dict[str, Any] = raw.http_response.json()
    assert body["choices"][0]["logprobs"] is None, "logprobs the gateway added must be stripped"
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert row.status_code == 200 and not row.cancelled
    assert (row.prompt_tokens, row.completion_tokens) == (
        body["usage"]["prompt_tokens"],
        body["usage"]["completion_tokens"],
    )
    assert row.cached_tokens == body["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert row.usage_source == "backend"
    metrics = body["metrics"]
    assert row.engine_queue_ms == metrics["queue_time_ms"]
    assert row.engine_prefill_ms == metrics["time_to_first_token_ms"]
    assert row.engine_decode_ms == metrics["generation_time_ms"]
    assert row.engine_itl_ms == metrics["mean_itl_ms"]
    assert (row.feature, row.end_user, row.source) == ("contracts", "user-17", "product")
    assert (row.model, row.stream, row.n, row.seed, row.max_tokens) == ("tiny", False, 1, 7, 40)
    assert row.temperature == pytest.approx(0.8) and row.top_p == pytest.approx(0.95)
    assert row.finish_reason == "stop"
    assert row.input_cost == pytest.approx(row.prompt_tokens * 0.5 / 1e6)
    assert row.output_cost == pytest.approx(row.completion_tokens * 1.5 / 1e6)
    assert row.flops_estimate == pytest.approx(
        2 * 8e9 * (row.prompt_tokens + row.completion_tokens)
    )
    assert row.e2e_ms is not None and row.e2e_ms > 0
    assert row.overhead_ms is not None and 0 < row.overhead_ms < row.e2e_ms
    assert float(raw.headers["x-plumbline-overhead-ms"]) > 0
    stored = calls.logprobs(row)
    assert stored is not None and len(stored[0]) == row.completion_tokens
    assert all(len(entry["top_logprobs"]) == 5 for entry in stored[0])
    assert row.logprob_mode == "raw_logprobs"
    assert row.near_ties is not None and row.logprob_min_margin is not None


def test_stored_logprobs_equal_the_backends(client: openai.OpenAI, calls: CallReader) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny", messages=INDEMNITY_Q, logprobs=True, top_logprobs=5, seed=11
    )
    sent = raw.http_response.json()["choices"][0]["logprobs"]["content"]
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert calls.logprobs(row) == {0: sent}


def test_stream_records_client_side_phases_and_strips_usage(
    client: openai.OpenAI, calls: CallReader
) -> None:
    with client.chat.completions.with_streaming_response.create(
        model="tiny",
        messages=[{"role": "user", "content": "Tell me a story about the sea."}],
        stream=True,
        max_tokens=30,
        seed=3,
    ) as response:
        call_id = response.headers["x-plumbline-call-id"]
        chunks = list(response.parse())
    assert all(chunk.usage is None for chunk in chunks), "usage the gateway added must be stripped"
    assert chunks[-1].system_fingerprint is not None
    row = calls.wait(call_id)
    assert row.stream and row.status_code == 200
    assert row.completion_tokens == 30 and row.finish_reason == "length"
    assert row.ttft_ms is not None and row.decode_ms is not None
    assert row.itl_mean_ms is not None and row.itl_p50_ms is not None
    assert row.itl_p95_ms is not None and row.itl_max_ms is not None
    assert row.itl_p50_ms <= row.itl_p95_ms <= row.itl_max_ms
    assert row.engine_decode_ms is not None, "engine metrics come from the stripped usage chunk"


def test_request_id_is_echoed_and_forwarded(client: openai.OpenAI, calls: CallReader) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny", messages=INDEMNITY_Q, max_tokens=5, extra_headers={"X-Request-Id": "abc-123"}
    )
    assert raw.headers["x-request-id"] == "abc-123"
    assert raw.parse().id == "chatcmpl-abc-123", "the backend saw the same request id"
    assert calls.wait(raw.headers["x-plumbline-call-id"]).request_id == "abc-123"


def test_completions_n2_and_prefix_cache(client: openai.OpenAI, calls: CallReader) -> None:
    prompt = "The quick brown fox jumps over the lazy dog. " * 20
    first = client.completions.with_raw_response.create(model="tiny", prompt=prompt, max_tokens=4)
    second = client.completions.with_raw_response.create(
        model="tiny", prompt=prompt, max_tokens=4, n=2, seed=5
    )
    row1 = calls.wait(first.headers["x-plumbline-call-id"])
    row2 = calls.wait(second.headers["x-plumbline-call-id"])
    assert row1.endpoint == "/v1/completions" and row2.n == 2
    assert row2.cached_tokens is not None and row2.cached_tokens > 0
    assert row2.cached_tokens == second.parse().usage.prompt_tokens_details.cached_tokens  # type: ignore[union-attr]
    assert row2.completion_tokens == 8, "usage sums completion tokens over n choices"
    stored = calls.logprobs(row2)
    assert stored is not None and set(stored) == {0, 1}


def test_models_are_merged_from_backends(gateway: GatewayProcess, client: openai.OpenAI) -> None:
    models = client.models.list().data
    assert [m.id for m in models] == ["tiny"]
    assert models[0].model_extra is not None and models[0].model_extra["max_model_len"] == 4096
