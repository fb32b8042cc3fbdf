"""The pooling kinds' pieces: usage found as bytes, errors kept, items counted as vLLM does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from gateway.metering.record import CallRecord
from gateway.proxy.call_kinds.pooling_items import prompt_items, rerank_items, score_items
from gateway.proxy.call_kinds.pooling_meter import PoolingMeter, usage_of
from gateway.proxy.request_fields import tokens_used
from gateway.proxy.upstream_errors import UpstreamProtocolError

USAGE: dict[str, Any] = {"prompt_tokens": 9, "total_tokens": 9}


@pytest.mark.parametrize(
    "answer",
    [
        {"id": "e", "data": [{"embedding": [0.1] * 4}], "usage": USAGE | {"details": None}},
        {"id": "r", "model": "m", "usage": USAGE, "results": [{"document": {"text": "}"}}]},
        {"usage": USAGE, "data": [{"text": '"usage": {"prompt_tokens": 1}'}]},
    ],
    ids=["usage-last", "usage-before-results", "usage-spelt-in-a-string"],
)
def test_usage_is_found_in_the_bytes_wherever_vllm_puts_it(answer: dict[str, Any]) -> None:
    body = orjson.dumps(answer)
    meter = PoolingMeter()
    assert meter.body(body, 200) is body
    assert meter.result().usage == answer["usage"]


def test_an_answer_without_usage_has_none_and_a_non_object_is_refused() -> None:
    assert usage_of(b'{"data": []}') is None
    with pytest.raises(UpstreamProtocolError):
        PoolingMeter().body(b"\x00\x01binary", 200)


def test_errors_are_kept_whatever_their_shape() -> None:
    meter = PoolingMeter()
    error = {"error": {"message": "too long", "type": "BadRequestError", "code": 400}}
    meter.body(orjson.dumps(error), 400)
    failure = meter.result().failure
    assert failure is not None and (failure.status, failure.message) == (400, "too long")
    bare = PoolingMeter()
    bare.body(b'{"detail":"Not Found"}', 404)
    failure = bare.result().failure
    assert failure is not None and "Not Found" in failure.message


def test_tokenizer_calls_count_no_usage() -> None:
    meter = PoolingMeter(counts_usage=False)
    meter.body(b'{"count":3,"tokens":[1,2,3],"usage":{"prompt_tokens":3}}', 200)
    assert meter.result().usage is None


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"input": "a"}, ("input", 1)),
        ({"input": ["a", "b"]}, ("input", 2)),
        ({"input": [1, 2, 3]}, ("input", 1)),
        ({"input": [[1], [2]]}, ("input", 2)),
        ({"input": []}, ("input", 0)),
        ({"input": 5}, ("input", None)),
        ({"input": [{"role": "user", "content": "a"}]}, ("input", 1)),
        ({"messages": [{"role": "user", "content": "a"}]}, ("messages", 1)),
        ({"messages": [[{"role": "user", "content": "a"}]] * 3}, ("messages", 3)),
        ({"messages": "a"}, ("messages", None)),
    ],
)
def test_prompts_are_counted_as_vllm_reads_them(
    payload: dict[str, Any], expected: tuple[str, int | None]
) -> None:
    assert prompt_items(payload) == expected


def test_pairs_and_documents_are_counted() -> None:
    assert score_items({"text_1": "q", "text_2": ["a", "b"]}) == ("text_2", 2)
    assert score_items({"queries": ["a", "b", "c"], "documents": "d"}) == ("queries", 3)
    assert score_items({"data_1": {"content": []}, "data_2": [{"content": []}]}) == ("data_2", 1)
    assert score_items({"text_1": "q"}) == ("text_1", None)
    assert rerank_items({"documents": ["a", "b"]}) == ("documents", 2)
    assert rerank_items({"documents": 3}) == ("documents", None)


def test_a_rerank_call_is_charged_its_input_tokens() -> None:
    record = CallRecord(
        id="c",
        created_at=datetime.now(UTC),
        request_id="r",
        endpoint="/rerank",
        usage={"prompt_tokens": 16, "total_tokens": 16},
        items=2,
    )
    assert tokens_used(record) == 16
