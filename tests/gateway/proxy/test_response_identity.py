"""Every call kind's meter keeps the backend's response `id` and `model`, bounded, never failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway.config import LogprobCapture
from gateway.metering.metered import IDENTITY_CHARS, Metered
from gateway.proxy.audio.meter import AudioMeter
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.completions import Completions
from gateway.proxy.call_kinds.messages_meter import MessagesMeter
from gateway.proxy.call_kinds.pooling_meter import PoolingMeter
from gateway.proxy.call_kinds.response_identity import head_identity
from gateway.proxy.call_kinds.responses import Responses
from gateway.proxy.request_plan import MeasurementPlan, plan_request
from plumbline.models import Call
from tests.support.captures import CAPTURES, capture_events

ROUTES = Path(__file__).parents[2] / "fixtures" / "vllm_routes"


def _route(name: str) -> dict[str, Any]:
    return dict(json.loads((ROUTES / f"{name}.json").read_text()))


def _events(text: str) -> list[bytes]:
    return [e + b"\n\n" for e in text.encode().split(b"\n\n") if e]


def _kind_meter(kind: CallKind, payload: dict[str, Any]) -> ResponseMeter:
    return kind.meter(plan_request(payload, kind, LogprobCapture()), None)


def _fed(meter: ResponseMeter, events: list[bytes]) -> tuple[bytes, Metered]:
    out = b"".join(b"".join(meter.feed(e, float(t))) for t, e in enumerate(events))
    return out + b"".join(meter.flush()), meter.result()


def _identity(measured: Metered) -> tuple[str | None, str | None]:
    return measured.response_id, measured.response_model


def test_the_bound_is_the_columns_length() -> None:
    for column in ("response_id", "response_model"):
        assert Call.__table__.c[column].type.length == IDENTITY_CHARS


@pytest.mark.parametrize(
    ("kind", "capture", "expected_id"),
    [
        (ChatCompletions(), "chat_nonstream_plain.json", "chatcmpl-899ec939d1295e39"),
        (Completions(), "cmpl_stop.json", "cmpl-b79b84e1803ff14e"),
    ],
)
def test_a_choices_body_keeps_its_id_and_model(
    kind: CallKind, capture: str, expected_id: str
) -> None:
    body = (CAPTURES / capture).read_bytes()
    for payload in ({}, {"logprobs": True, "top_logprobs": 2}):
        meter = _kind_meter(kind, payload)
        meter.body(body, 200)
        assert _identity(meter.result()) == (expected_id, "tiny")


@pytest.mark.parametrize(
    ("kind", "capture"),
    [
        (ChatCompletions(), "chat_stream_usage_logprobs.txt"),
        (ChatCompletions(), "chat_stream_nousage.txt"),
        (Completions(), "cmpl_stream_usage.txt"),
    ],
)
def test_a_choices_stream_keeps_the_first_chunks_id_and_model(kind: CallKind, capture: str) -> None:
    events = capture_events(capture)
    first = orjson.loads(events[0][6:])
    meter = _kind_meter(kind, {"stream": True})
    # Cut short after one chunk: the identity is already known.
    _, measured = _fed(meter, events[:1])
    assert _identity(measured) == (first["id"], first["model"])
    _, measured = _fed(meter, events[1:])
    assert _identity(measured) == (first["id"], first["model"])


def test_a_responses_body_and_stream_keep_the_responses_id_and_model() -> None:
    plain = _route("resp_plain")
    meter = _kind_meter(Responses(), {})
    meter.body(plain["text"].encode(), 200)
    assert _identity(meter.result()) == (plain["body"]["id"], "tiny")
    stream = _events(_route("resp_stream")["text"])
    created = orjson.loads(stream[0].split(b"data: ", 1)[1])["response"]
    meter = _kind_meter(Responses(), {"stream": True})
    out, measured = _fed(meter, stream[:1])
    # A stream cut after its first event still names its response.
    assert _identity(measured) == (created["id"], "tiny") and out == stream[0]
    _, measured = _fed(meter, stream[1:])
    assert _identity(measured) == (created["id"], "tiny")


def test_a_messages_body_and_stream_keep_the_messages_id_and_model() -> None:
    plain = _route("msg_plain")
    meter = MessagesMeter(MeasurementPlan(stream=False))
    meter.body(plain["text"].encode(), 200)
    assert _identity(meter.result()) == (plain["body"]["id"], "tiny")
    stream = _route("msg_stream")
    message = stream["events"][0]["data"]["message"]
    meter = MessagesMeter(MeasurementPlan(stream=True))
    out, measured = _fed(meter, _events(stream["text"]))
    assert _identity(measured) == (message["id"], "tiny")
    assert out == stream["text"].encode()


@pytest.mark.parametrize("capture", ["pool_embeddings", "pool_rerank", "pool_score"])
def test_a_pooling_answer_keeps_its_id_and_model_read_from_its_head(capture: str) -> None:
    route = _route(capture)
    meter = PoolingMeter()
    body = route["text"].encode()
    assert meter.body(body, 200) is body
    assert _identity(meter.result()) == (route["body"]["id"], route["body"]["model"])


def test_a_transcription_stream_keeps_its_chunks_id_and_model() -> None:
    chunk = {"id": "trsc-1", "object": "transcription.chunk", "model": "whisper", "choices": []}
    events = [b"data: " + orjson.dumps(chunk) + b"\n\n", b"data: [DONE]\n\n"]
    _, measured = _fed(AudioMeter(None), events)
    assert _identity(measured) == ("trsc-1", "whisper")


def _chat_body(**fields: Any) -> bytes:
    body = {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop"}]}
    return orjson.dumps(fields | body)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        # A hostile backend's 10 MB id is cut to the column's length, not held whole.
        ({"id": "x" * 10_000_000, "model": "m" * 300}, ("x" * 256, "m" * 256)),
        ({"id": 17, "model": ["tiny"]}, (None, None)),
        ({"id": {"nested": "x"}, "model": None}, (None, None)),
        ({}, (None, None)),
        ({"id": "", "model": "tiny"}, (None, "tiny")),
        # Postgres text takes no NUL: it becomes U+FFFD, here as in the stored row.
        ({"id": "a\x00b", "model": "tiny"}, ("a\ufffdb", "tiny")),
    ],
)
def test_a_hostile_identity_is_bounded_or_left_out(
    fields: dict[str, Any], expected: tuple[str | None, str | None]
) -> None:
    meter = _kind_meter(ChatCompletions(), {})
    meter.body(_chat_body(**fields), 200)
    assert _identity(meter.result()) == expected
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]}
    stream = _kind_meter(ChatCompletions(), {"stream": True})
    _, measured = _fed(stream, [b"data: " + orjson.dumps(fields | chunk) + b"\n\n"])
    assert _identity(measured) == expected


def test_named_events_that_are_not_json_pass_as_they_came() -> None:
    # (With nothing to restore: reading the identity adds no refusal of its own.)
    created = b"event: response.created\ndata: {not json\n\n"
    out, measured = _fed(Responses().meter(MeasurementPlan(stream=True), None), [created])
    assert out == created and measured.response_id is None
    start = b"event: message_start\ndata: [1, 2]\n\n"
    out, measured = _fed(MessagesMeter(MeasurementPlan(stream=True)), [start])
    assert out == start and measured.response_id is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"id":"embd-1","object":"list","model":"tiny","data":[]}', ("embd-1", "tiny")),
        (b' { "id" : "a\\"b" , "model" : "t\\u00e9" , "data":[]}', ('a"b', "té")),
        # Members of nested objects are never read as the answer's.
        (b'{"object":"list","data":[{"id":"inner","model":"inner"}]}', (None, None)),
        (b'{"usage":{"id":"inner"},"id":"late"}', (None, None)),
        # Keys spelled inside a string value are no members.
        (b'{"object":"x\\",\\"id\\":\\"fake","model":"tiny"}', (None, "tiny")),
        # An id past the bound is not read (and nothing of the megabytes is parsed).
        (b'{"id":"' + b"x" * 5_000_000 + b'","model":"tiny"}', (None, None)),
        (b'{"id":17,"model":"tiny"}', (None, "tiny")),
        (b'{"id":"bad \\u12"}', (None, None)),
        (b"[]", (None, None)),
        (b"", (None, None)),
    ],
)
def test_a_pooling_heads_identity_is_read_only_from_its_own_members(
    body: bytes, expected: tuple[str | None, str | None]
) -> None:
    assert head_identity(body) == expected
