"""Messages on spans from hostile stored bodies: tool results' media, deep nesting, sheer size."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.bounded_json import CUT, MAX_DEPTH, bounded_json
from gateway.tracing.input_messages import LATEST_MESSAGES
from gateway.tracing.spans import MAX_BODY_CHARS, MAX_STRUCTURED_BODY_CHARS, call_span
from tests.support.otlp_receiver import attributes
from tests.support.records import make_record

POLICY = RedactionPolicy(RedactionConfig(enabled=True))
INLINE = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBg"
WEB = "https://example.com/cat.png"


def _attrs(endpoint: str, request: str, response: str = "{}") -> dict[str, Any]:
    """The span's attributes for bodies given as the client's and backend's JSON text."""
    record = make_record(
        endpoint=endpoint,
        store_body=True,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        trace_sampled=True,
        logprob_chunks=[],
    )
    row, _ = call_row(record, POLICY)
    bodies = (POLICY.request(request.encode()), POLICY.response(response.encode(), False))
    return attributes(call_span(record, row, latest=True, bodies=bodies).attributes)


def _tool_response(attrs: dict[str, Any]) -> Any:
    (message,) = orjson.loads(attrs["gen_ai.input.messages"])
    (part,) = message["parts"]
    assert part["type"] == "tool_call_response" and part["id"] == "call_1"
    return part["response"]


MEDIA_PARTS = [
    {"type": "text", "text": "the chart"},
    {"type": "image_url", "image_url": {"url": INLINE}},
    {"type": "image_url", "image_url": {"url": WEB}},
    {"type": "input_audio", "input_audio": {"data": INLINE, "format": "wav"}},
]
RESPONSES_MEDIA = [
    {"type": "input_text", "text": "the chart"},
    {"type": "input_image", "image_url": INLINE},
    {"type": "input_image", "image_url": WEB},
    {"type": "input_file", "file_data": INLINE, "filename": "chart.png"},
]


@pytest.mark.parametrize(
    ("endpoint", "request_body"),
    [
        (
            "/v1/chat/completions",
            {"messages": [{"role": "tool", "tool_call_id": "call_1", "content": MEDIA_PARTS}]},
        ),
        (
            "/v1/responses",
            {
                "input": [
                    {"type": "function_call_output", "call_id": "call_1", "output": RESPONSES_MEDIA}
                ]
            },
        ),
    ],
)
def test_inline_media_in_a_tool_result_is_named_by_its_type_only(
    endpoint: str, request_body: dict[str, Any]
) -> None:
    attrs = _attrs(endpoint, orjson.dumps(request_body).decode())
    text, inline, web, other = _tool_response(attrs)
    assert text == {"type": "text", "content": "the chart"}
    assert inline in ({"type": "image_url"}, {"type": "input_image"})
    assert web == {"type": "uri", "modality": "image", "uri": WEB}
    assert other in ({"type": "input_audio"}, {"type": "input_file"})
    assert "base64" not in str(attrs) and "iVBOR" not in str(attrs)


def test_a_tool_result_that_is_text_stays_its_text() -> None:
    request = {"messages": [{"role": "tool", "tool_call_id": "call_1", "content": "Cap: 2x"}]}
    assert _tool_response(_attrs("/v1/chat/completions", orjson.dumps(request).decode())) == (
        "Cap: 2x"
    )
    output = {"input": [{"type": "function_call_output", "call_id": "call_1", "output": "ok"}]}
    assert _tool_response(_attrs("/v1/responses", orjson.dumps(output).decode())) == "ok"


def _nested(levels: int) -> str:
    """A JSON object nested `levels` deep, written as text (orjson writes at most 254)."""
    return '{"a":' * levels + '"x"' + "}" * levels


DEEP = _nested(600)
RESULTS = '[{"type":"tool_result","tool_use_id":"call_1","content":' * 500 + '"x"' + "}]" * 500
DEEP_REQUESTS = [
    ("/v1/chat/completions", '{"messages":[{"role":"tool","tool_call_id":"c","content":%s}]}'),
    ("/v1/chat/completions", '{"messages":[{"role":"tool","content":[%s]}]}'),
    ("/v1/responses", '{"input":[{"type":"function_call_output","call_id":"c","output":%s}]}'),
    ("/v1/responses", '{"input":[{"type":"function_call","call_id":"c","arguments":%s}]}'),
    (
        "/v1/chat/completions",
        '{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":%s}}]}]}',
    ),
    ("/v1/messages", '{"messages":[{"role":"user","content":[{"type":"tool_use","input":%s}]}]}'),
    (
        "/v1/messages",
        '{"messages":[{"role":"user","content":[{"type":"tool_result","content":%s}]}]}',
    ),
]


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@pytest.mark.parametrize(("endpoint", "template"), DEEP_REQUESTS)
def test_a_deeply_nested_tool_call_or_result_still_makes_the_span(
    endpoint: str, template: str
) -> None:
    attrs = _attrs(endpoint, template % DEEP)
    messages = orjson.loads(attrs["gen_ai.input.messages"])
    assert len(attrs["gen_ai.input.messages"]) <= MAX_BODY_CHARS
    assert _depth(messages) <= MAX_DEPTH + 1
    (part,) = messages[0]["parts"]
    assert part["type"] in ("tool_call", "tool_call_response")


def test_nested_tool_results_are_not_opened_past_the_first() -> None:
    attrs = _attrs("/v1/messages", '{"messages":[{"role":"user","content":' + RESULTS + "}]}")
    (message,) = orjson.loads(attrs["gen_ai.input.messages"])
    assert message["parts"] == [
        {
            "type": "tool_call_response",
            "id": "call_1",
            "response": [{"type": "tool_call_response", "id": "call_1"}],
        }
    ]


@pytest.mark.parametrize(
    "response",
    [
        '{"content":[{"type":"tool_use","id":"t","name":"f","input":%s}],"stop_reason":"tool_use"}',
        '{"choices":[{"message":{"tool_calls":[{"id":"t","function":{"arguments":%s}}]}}]}',
    ],
)
def test_a_deeply_nested_answer_still_makes_the_span(response: str) -> None:
    endpoint = "/v1/messages" if response.startswith('{"content"') else "/v1/chat/completions"
    attrs = _attrs(endpoint, '{"messages":[]}', response % DEEP)
    (answer,) = orjson.loads(attrs["gen_ai.output.messages"])
    (call,) = answer["parts"]
    assert call["type"] == "tool_call" and CUT in attrs["gen_ai.output.messages"]


def _chat_of_size(chars: int) -> str:
    """A chat request of one-character messages, `chars` long or a little less."""
    message = '{"role":"user","content":"x"},'
    count = (chars - len('{"messages":[]}') + 1) // len(message)
    return '{"messages":[' + (message * count)[:-1] + "]}"


def test_messages_are_built_only_from_bodies_up_to_the_size_bound() -> None:
    small = _chat_of_size(MAX_STRUCTURED_BODY_CHARS)
    assert len(small) <= MAX_STRUCTURED_BODY_CHARS
    attrs = _attrs("/v1/chat/completions", small)
    assert "gen_ai.input.messages" in attrs and "plumbline.request.body" not in attrs
    large = _chat_of_size(MAX_STRUCTURED_BODY_CHARS + 100)
    assert len(large) > MAX_STRUCTURED_BODY_CHARS
    answer = orjson.dumps({"choices": [{"message": {"content": "y" * len(large)}}]}).decode()
    attrs = _attrs("/v1/chat/completions", large, answer)
    assert "gen_ai.input.messages" not in attrs and "gen_ai.output.messages" not in attrs
    assert attrs["plumbline.request.body"] == POLICY.request(large.encode())[:MAX_BODY_CHARS]
    stored_answer = POLICY.response(answer.encode(), False)
    assert attrs["plumbline.response.body"] == stored_answer[:MAX_BODY_CHARS]


def test_the_latest_messages_kept_are_as_many_as_fit() -> None:
    message = {"role": "user", "parts": [{"type": "text", "content": "x"}]}
    messages = [message] * 34_000
    kept = orjson.loads(bounded_json(messages, MAX_BODY_CHARS))
    assert 0 < len(kept) < len(messages)
    assert len(orjson.dumps(messages[-len(kept) - 1 :])) > MAX_BODY_CHARS


@pytest.mark.parametrize(
    ("endpoint", "field"),
    [
        ("/v1/chat/completions", "messages"),
        ("/v1/responses", "input"),
        ("/v1/messages", "messages"),
    ],
)
def test_only_the_latest_messages_are_read(endpoint: str, field: str) -> None:
    oldest = {"role": "user", "content": "oldest"}
    # Items that are no message fill the tail: what is read is the latest, not what is kept.
    within = orjson.dumps({field: [oldest] + [5] * (LATEST_MESSAGES - 1)}).decode()
    (message,) = orjson.loads(_attrs(endpoint, within)["gen_ai.input.messages"])
    assert message["parts"] == [{"type": "text", "content": "oldest"}]
    beyond = orjson.dumps({field: [oldest] + [5] * LATEST_MESSAGES}).decode()
    attrs = _attrs(endpoint, beyond)
    assert "gen_ai.input.messages" not in attrs
    assert attrs["plumbline.request.body"] == POLICY.request(beyond.encode())[:MAX_BODY_CHARS]
