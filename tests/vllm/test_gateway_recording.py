"""Through the gateway to the real vLLM: each call's row holds exactly what vLLM reported.

Token counts equal vLLM's usage, stored logprobs (decoded with plumbline.logprob_codec)
equal vLLM's, engine queue / prefill / decode times equal vLLM's per-request `metrics`, and the
client-side TTFT is never shorter than the engine's own queue plus prefill.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from plumbline.models import Call
from tests.support.calls import CallReader

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

MESSAGES: list[Any] = [{"role": "user", "content": "How many days are in a week?"}]
PROMPT = "Two plus two is"
# Greedy and never cut short by EOS, so a direct call to vLLM repeats the gateway's exactly.
GREEDY: dict[str, Any] = {"temperature": 0, "extra_body": {"ignore_eos": True}}
GATEWAY_K = 5  # gateway_config's default logprob capture: top 5 per token
CALL_ID = "x-plumbline-call-id"


def _assert_usage(row: Call, usage: dict[str, Any]) -> None:
    assert row.usage_source == "backend"
    assert (row.prompt_tokens, row.completion_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert row.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]


def _assert_engine_times(row: Call, metrics: dict[str, Any]) -> None:
    assert row.engine_queue_ms == metrics["queue_time_ms"]
    assert row.engine_prefill_ms == metrics["time_to_first_token_ms"]
    assert row.engine_decode_ms == metrics["generation_time_ms"]
    assert row.engine_itl_ms == metrics["mean_itl_ms"]


def _assert_ttft_covers_engine(row: Call) -> None:
    # The client waits for the engine's queue and prefill, and then for the token to travel.
    assert row.ttft_ms is not None and row.engine_prefill_ms is not None
    assert row.engine_queue_ms is not None
    assert row.ttft_ms >= row.engine_prefill_ms
    assert row.ttft_ms >= row.engine_queue_ms + row.engine_prefill_ms


def _stream(client: openai.OpenAI, **params: Any) -> tuple[str, list[dict[str, Any]]]:
    """A streamed chat call through the SDK: its call id and its chunks as dicts."""
    with client.chat.completions.with_streaming_response.create(
        model="tiny", stream=True, **params
    ) as response:
        call_id = response.headers[CALL_ID]
        chunks = [chunk.model_dump(exclude_unset=True) for chunk in response.parse()]
    return call_id, chunks


def _streamed_logprobs(chunks: list[dict[str, Any]]) -> dict[int, list[Any]]:
    per_choice: dict[int, list[Any]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            content = (choice.get("logprobs") or {}).get("content") or []
            per_choice.setdefault(choice["index"], []).extend(content)
    return {index: entries for index, entries in per_choice.items() if entries}


def test_chat_body_usage_metrics_and_client_logprobs(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    raw = gateway_client.chat.completions.with_raw_response.create(
        model="tiny", messages=MESSAGES, max_tokens=6, logprobs=True, top_logprobs=8, **GREEDY
    )
    body = raw.http_response.json()
    row = calls.wait(raw.headers[CALL_ID])
    assert (row.status_code, row.finish_reason, row.n, row.max_tokens) == (200, "length", 1, 6)
    _assert_usage(row, body["usage"])
    _assert_engine_times(row, body["metrics"])
    # Asked for more than the gateway captures by default: the client's own 8 are kept.
    assert calls.logprobs(row) == {0: body["choices"][0]["logprobs"]["content"]}
    assert row.logprob_mode == "raw_logprobs"


def test_logprobs_the_gateway_added_equal_vllms(
    gateway_client: openai.OpenAI, client: openai.OpenAI, calls: CallReader
) -> None:
    raw = gateway_client.chat.completions.with_raw_response.create(
        model="tiny", messages=MESSAGES, max_tokens=5, **GREEDY
    )
    assert raw.http_response.json()["choices"][0]["logprobs"] is None
    stored = calls.logprobs(calls.wait(raw.headers[CALL_ID]))
    direct = client.chat.completions.with_raw_response.create(
        model="tiny", messages=MESSAGES, max_tokens=5, logprobs=True, top_logprobs=GATEWAY_K,
        **GREEDY,
    )  # fmt: skip
    assert stored == {0: direct.http_response.json()["choices"][0]["logprobs"]["content"]}


def test_fewer_top_logprobs_for_the_client_all_k_stored(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    raw = gateway_client.chat.completions.with_raw_response.create(
        model="tiny", messages=MESSAGES, max_tokens=4, logprobs=True, top_logprobs=2, **GREEDY
    )
    sent = raw.http_response.json()["choices"][0]["logprobs"]["content"]
    stored = calls.logprobs(calls.wait(raw.headers[CALL_ID]))
    assert stored is not None
    assert all(len(entry["top_logprobs"]) == GATEWAY_K for entry in stored[0])
    trimmed = [{**entry, "top_logprobs": entry["top_logprobs"][:2]} for entry in stored[0]]
    assert trimmed == sent


def test_stream_with_usage_records_vllms_usage_metrics_and_logprobs(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    call_id, chunks = _stream(
        gateway_client,
        messages=MESSAGES,
        max_tokens=7,
        logprobs=True,
        top_logprobs=GATEWAY_K,
        stream_options={"include_usage": True},
        **GREEDY,
    )
    final = chunks[-1]
    assert final["choices"] == []
    row = calls.wait(call_id)
    assert (row.stream, row.finish_reason) == (True, "length")
    _assert_usage(row, final["usage"])
    _assert_engine_times(row, final["metrics"])
    _assert_ttft_covers_engine(row)
    assert calls.logprobs(row) == _streamed_logprobs(chunks)


def test_stream_without_usage_is_still_metered(
    gateway_client: openai.OpenAI, client: openai.OpenAI, calls: CallReader
) -> None:
    call_id, chunks = _stream(gateway_client, messages=MESSAGES, max_tokens=5, **GREEDY)
    assert all("usage" not in chunk for chunk in chunks)
    row = calls.wait(call_id)
    direct = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=5, **GREEDY)
    assert direct.usage is not None
    _assert_usage(row, direct.usage.model_dump())
    _assert_ttft_covers_engine(row)
    assert row.engine_decode_ms is not None
    assert row.itl_p50_ms is not None and row.decode_ms is not None


def test_n2_stores_both_choices(gateway_client: openai.OpenAI, calls: CallReader) -> None:
    raw = gateway_client.chat.completions.with_raw_response.create(
        model="tiny",
        messages=MESSAGES,
        max_tokens=4,
        n=2,
        seed=7,
        logprobs=True,
        top_logprobs=GATEWAY_K,
        extra_body={"ignore_eos": True},
    )
    body = raw.http_response.json()
    row = calls.wait(raw.headers[CALL_ID])
    _assert_usage(row, body["usage"])
    assert row.completion_tokens == 8, "usage sums completion tokens over the choices"
    # vLLM reports no per-request metrics for n > 1, so there are no engine times to record.
    assert body["metrics"] is None
    assert (row.engine_queue_ms, row.engine_prefill_ms, row.engine_decode_ms) == (None, None, None)
    assert calls.logprobs(row) == {c["index"]: c["logprobs"]["content"] for c in body["choices"]}


def test_n2_stream_stores_each_choices_logprobs(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    call_id, chunks = _stream(
        gateway_client,
        messages=MESSAGES,
        max_tokens=3,
        n=2,
        seed=3,
        logprobs=True,
        top_logprobs=GATEWAY_K,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    row = calls.wait(call_id)
    _assert_usage(row, chunks[-1]["usage"])
    assert calls.logprobs(row) == _streamed_logprobs(chunks)
    assert set(_streamed_logprobs(chunks)) == {0, 1}


def test_stop_string_is_recorded(gateway_client: openai.OpenAI, calls: CallReader) -> None:
    probe = gateway_client.completions.create(
        model="tiny", prompt=PROMPT, max_tokens=8, logprobs=0, **GREEDY
    )
    assert probe.choices[0].logprobs is not None
    tokens = list(probe.choices[0].logprobs.tokens or [])
    stop = next(t for t in tokens[1:] if t.strip() and t.isascii() and t not in tokens[0])
    raw = gateway_client.completions.with_raw_response.create(
        model="tiny", prompt=PROMPT, max_tokens=8, stop=[stop], **GREEDY
    )
    body = raw.http_response.json()
    assert (body["choices"][0]["finish_reason"], body["choices"][0]["stop_reason"]) == (
        "stop",
        stop,
    )
    row = calls.wait(raw.headers[CALL_ID])
    assert row.finish_reason == "stop"
    _assert_usage(row, body["usage"])
    _assert_engine_times(row, body["metrics"])


def test_completions_logprobs_stored_as_sent(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    raw = gateway_client.completions.with_raw_response.create(
        model="tiny", prompt=PROMPT, max_tokens=5, logprobs=3, echo=True, **GREEDY
    )
    body = raw.http_response.json()
    row = calls.wait(raw.headers[CALL_ID])
    assert row.endpoint == "/v1/completions"
    _assert_usage(row, body["usage"])
    _assert_engine_times(row, body["metrics"])
    # Echoed prompt positions (the first one null) are part of what vLLM sent and so stored.
    assert calls.logprobs(row) == {0: body["choices"][0]["logprobs"]}


def test_completions_stream_records_usage_and_ttft(
    gateway_client: openai.OpenAI, calls: CallReader
) -> None:
    with gateway_client.completions.with_streaming_response.create(
        model="tiny",
        prompt=PROMPT,
        max_tokens=6,
        stream=True,
        stream_options={"include_usage": True},
        **GREEDY,
    ) as response:
        call_id = response.headers[CALL_ID]
        chunks = [chunk.model_dump(exclude_unset=True) for chunk in response.parse()]
    row = calls.wait(call_id)
    _assert_usage(row, chunks[-1]["usage"])
    _assert_engine_times(row, chunks[-1]["metrics"])
    _assert_ttft_covers_engine(row)
    assert row.finish_reason == "length"
