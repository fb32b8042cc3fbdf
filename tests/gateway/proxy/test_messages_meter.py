"""The Messages meter and kinds, on real vLLM 0.32 captures: metered, bytes unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway.errors import GatewayError
from gateway.proxy.call_kinds.anthropic_api import anthropic_error_type
from gateway.proxy.call_kinds.messages import CountTokens, Messages
from gateway.proxy.call_kinds.messages_meter import MessagesMeter, messages_usage
from gateway.proxy.media_sources import source_urls
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError

CAPTURES = Path(__file__).parents[2] / "fixtures" / "vllm_routes"


def _capture(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((CAPTURES / f"{name}.json").read_text())
    return record


def _events(text: str) -> list[bytes]:
    return [e + b"\n\n" for e in text.encode().split(b"\n\n") if e]


def test_a_captured_stream_is_metered_and_passed_unchanged() -> None:
    record = _capture("msg_stream")
    meter = MessagesMeter(MeasurementPlan(stream=True))
    out = b"".join(b"".join(meter.feed(e, float(t))) for t, e in enumerate(_events(record["text"])))
    assert out == record["text"].encode()
    measured = meter.result()
    deltas = [e for e in record["events"] if e["event"] == "content_block_delta"]
    final = record["events"][-2]["data"]["usage"]
    assert meter.done and measured.completion_tokens_seen == len(deltas)
    assert len(measured.token_chunk_times) == len(deltas)
    assert measured.usage is not None
    assert (
        measured.usage["prompt_tokens"] == final["input_tokens"] + final["cache_read_input_tokens"]
    )
    assert measured.usage["completion_tokens"] == final["output_tokens"]
    assert measured.finish_reason == "length" and measured.engine_metrics is None


def test_a_captured_body_is_metered_and_passed_unchanged() -> None:
    record = _capture("msg_plain")
    meter = MessagesMeter(MeasurementPlan(stream=False))
    body = record["text"].encode()
    assert meter.body(body, 200) is body
    usage = meter.result().usage
    assert (
        usage is not None and usage["completion_tokens"] == record["body"]["usage"]["output_tokens"]
    )


@pytest.mark.parametrize("name", ["msg_bad_model", "msg_badjson", "msg_too_long"])
def test_vllms_errors_in_either_shape_are_recorded(name: str) -> None:
    record = _capture(name)
    meter = MessagesMeter(MeasurementPlan(stream=False))
    assert meter.body(record["text"].encode(), record["status"]) == record["text"].encode()
    failure = meter.result().failure
    assert failure is not None and failure.status == record["status"] and failure.message


def test_cache_reads_and_writes_are_part_of_the_prompt() -> None:
    usage = messages_usage(
        {
            "input_tokens": 3,
            "output_tokens": 2,
            "cache_read_input_tokens": 128,
            "cache_creation_input_tokens": 1,
        }
    )
    assert usage is not None
    assert (usage["prompt_tokens"], usage["prompt_tokens_details"]["cached_tokens"]) == (132, 128)
    assert messages_usage("nope") is None


def test_an_error_event_ends_the_stream_and_signatures_are_no_tokens() -> None:
    meter = MessagesMeter(MeasurementPlan(stream=True))
    signature = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    meter.feed(signature + b'"delta":{"type":"signature_delta","signature":"ab"}}\n\n', 1.0)
    assert meter.result().completion_tokens_seen == 0
    error = {"type": "error", "error": {"type": "internal_error", "message": "boom"}}
    meter.feed(b"event: error\ndata: " + orjson.dumps(error) + b"\n\n", 2.0)
    failure = meter.result().failure
    assert meter.done and failure is not None
    assert (failure.status, failure.error_type, failure.message) == (500, "internal_error", "boom")
    with pytest.raises(UpstreamProtocolError):
        MessagesMeter(MeasurementPlan(stream=True)).feed(b"event: message_delta\ndata: {\n\n", 0)


def test_gateway_errors_have_anthropics_shape_and_types() -> None:
    kind = Messages()
    body = orjson.loads(kind.error_body(GatewayError(429, "slow down")))
    assert body == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    event = kind.stream_error(GatewayError(502, "cut"))
    assert event.startswith(b"event: error\ndata: ") and event.endswith(b"\n\n")
    named = {s: anthropic_error_type(s) for s in (400, 401, 403, 404, 413, 418, 500, 503, 504)}
    assert named == {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        418: "invalid_request_error",
        500: "api_error",
        503: "overloaded_error",
        504: "timeout_error",
    }


def test_the_key_is_a_bearer_token_or_x_api_key() -> None:
    kind = CountTokens()
    assert kind.presented_key({b"x-api-key": b"pl-a"}) == "pl-a"
    assert kind.presented_key({b"x-api-key": b"pl-a", b"authorization": b"Bearer pl-b"}) == "pl-b"
    assert kind.presented_key({b"x-api-key": b"  "}) is None
    assert kind.presented_key({}) is None


def test_messages_fields_are_read_as_vllm_reads_them() -> None:
    fields = Messages().read_fields({"stream": "yes", "max_tokens": "7"})
    assert (fields.stream, fields.max_tokens, fields.logprobs) == (True, 7, False)
    for bad in ({"max_tokens": "seven"}, {}, {"max_tokens": 4, "stream": "maybe"}):
        with pytest.raises(GatewayError) as refused:
            Messages().read_fields(bad)
        assert refused.value.status == 400 and str(refused.value.param).startswith("body.")


def test_every_url_source_is_found() -> None:
    url = {"type": "url", "url": "http://10.0.0.1/x"}
    payload = {
        "system": [{"type": "text", "text": "hi"}, {"type": "image", "source": url}],
        "messages": [
            {"role": "user", "content": "plain"},
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                    {"type": "document", "source": url},
                    {"type": "tool_result", "content": [{"type": "image", "source": url}]},
                    {"type": "image", "source": {"type": "url", "url": 5}},
                ],
            },
            "not a message",
        ],
    }
    assert source_urls(payload) == [
        ("system[1].source.url", "http://10.0.0.1/x"),
        ("messages[1].content[1].source.url", "http://10.0.0.1/x"),
        ("messages[1].content[2].content[0].source.url", "http://10.0.0.1/x"),
        ("messages[1].content[3].source.url", "5"),
    ]
    assert source_urls({"messages": "x", "system": 3}) == []
