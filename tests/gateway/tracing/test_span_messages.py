"""Prompt and completion on spans: the conventions' messages, from the stored (redacted) bodies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.bounded_json import bounded_json
from gateway.tracing.spans import MAX_BODY_CHARS, call_span
from tests.support.otlp_receiver import attributes
from tests.support.records import make_record

POLICY = RedactionPolicy(RedactionConfig(enabled=True))
SECRET = "alice@example.com"
CONTENT = (
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "plumbline.request.body",
    "plumbline.response.body",
)


def _sse(*events: Any, named: bool = False) -> bytes:
    out = []
    for event in events:
        if named:
            name, data = event
            out.append(f"event: {name}\ndata: ".encode() + orjson.dumps(data) + b"\n\n")
        else:
            out.append(b"data: " + orjson.dumps(event) + b"\n\n")
    return b"".join(out) + (b"" if named else b"data: [DONE]\n\n")


def _attrs(
    endpoint: str,
    request: Any,
    response: bytes,
    *,
    stream: bool = False,
    latest: bool = True,
    store_body: bool = True,
) -> dict[str, Any]:
    """The span's attributes, with the bodies as the exporter hands them: as stored."""
    record: CallRecord = make_record(
        endpoint=endpoint,
        stream=stream,
        store_body=store_body,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        trace_sampled=True,
        logprob_chunks=[],
    )
    row, _ = call_row(record, POLICY)
    bodies = (POLICY.request(orjson.dumps(request)), POLICY.response(response, stream))
    assert POLICY.redactor is not None
    span = call_span(record, row, latest=latest, bodies=bodies, redact=POLICY.redactor.text)
    return attributes(span.attributes)


def _json(attrs: dict[str, Any], name: str) -> Any:
    return orjson.loads(attrs[name])


CHAT_REQUEST = {
    "model": "tiny",
    "messages": [
        {"role": "system", "content": "You answer contract questions."},
        {"role": "user", "content": [{"type": "text", "text": f"Mail {SECRET} the cap"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"clause": "7.2"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Cap: 2x fees"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:xx"}}]},
    ],
}


def test_chat_messages_keep_roles_text_tool_calls_and_results_redacted() -> None:
    response = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": f"Sent to {SECRET}.",
                    "tool_calls": [
                        {"id": "call_2", "function": {"name": "send", "arguments": '{"to": 1}'}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    attrs = _attrs("/v1/chat/completions", CHAT_REQUEST, orjson.dumps(response))
    system, user, assistant, tool, image = _json(attrs, "gen_ai.input.messages")
    assert system == {
        "role": "system",
        "parts": [{"type": "text", "content": "You answer contract questions."}],
    }
    assert user["role"] == "user" and user["parts"][0]["content"].startswith("Mail [REDACTED")
    assert assistant["parts"] == [
        {"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {"clause": "7.2"}}
    ]
    assert tool == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1", "response": "Cap: 2x fees"}],
    }
    # Inline media is named by its part type only: its data never goes to a collector.
    assert image["parts"] == [{"type": "image_url"}]
    (answer,) = _json(attrs, "gen_ai.output.messages")
    assert answer["role"] == "assistant" and answer["finish_reason"] == "tool_call"
    text, call = answer["parts"]
    assert text["type"] == "text" and text["content"].startswith("Sent to [REDACTED")
    assert call == {"type": "tool_call", "id": "call_2", "name": "send", "arguments": {"to": 1}}
    assert SECRET not in str(attrs)
    # Chat has no instructions apart from its history; the raw bodies are not repeated.
    for name in ("gen_ai.system_instructions", "plumbline.request.body", "plumbline.response.body"):
        assert name not in attrs, name


def _chunk(index: int, **delta: Any) -> dict[str, Any]:
    reason = delta.pop("finish_reason", None)
    return {"choices": [{"index": index, "delta": delta, "finish_reason": reason}]}


def test_a_chat_stream_is_assembled_per_choice_with_a_secret_split_across_chunks_redacted() -> None:
    stream = _sse(
        _chunk(0, role="assistant", content=""),
        _chunk(1, role="assistant", content="Other "),
        _chunk(0, content="Write to alice@exa"),
        _chunk(0, content="mple.com today"),
        _chunk(
            0, tool_calls=[{"index": 0, "id": "c1", "function": {"name": "f", "arguments": ""}}]
        ),
        _chunk(0, tool_calls=[{"index": 0, "function": {"arguments": '{"a":'}}]),
        _chunk(0, tool_calls=[{"index": 0, "function": {"arguments": " 1}"}}]),
        _chunk(1, content="choice", finish_reason="length"),
        _chunk(0, finish_reason="tool_calls"),
    )
    attrs = _attrs("/v1/chat/completions", CHAT_REQUEST, stream, stream=True)
    first, second = _json(attrs, "gen_ai.output.messages")
    text, call = first["parts"]
    assert text["content"].startswith("Write to [REDACTED") and text["content"].endswith(" today")
    assert call == {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}
    assert first["finish_reason"] == "tool_call"
    assert second == {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Other choice"}],
        "finish_reason": "length",
    }
    assert "alice" not in str(attrs)


@pytest.mark.parametrize("stream", [False, True])
def test_a_completion_is_a_user_prompt_and_the_generated_text(stream: bool) -> None:
    request = {"model": "tiny", "prompt": "Once upon"}
    if stream:
        response = _sse(
            {"choices": [{"index": 0, "text": " a", "finish_reason": None}]},
            {"choices": [{"index": 0, "text": " time", "finish_reason": "stop"}]},
        )
    else:
        response = orjson.dumps(
            {"choices": [{"index": 0, "text": " a time", "finish_reason": "stop"}]}
        )
    attrs = _attrs("/v1/completions", request, response, stream=stream)
    assert _json(attrs, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Once upon"}]}
    ]
    assert _json(attrs, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": " a time"}],
            "finish_reason": "stop",
        }
    ]


RESPONSES_REQUEST = {
    "model": "tiny",
    "instructions": f"Never mail {SECRET}.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "What is the cap?"}]},
        {"type": "function_call", "call_id": "fc_1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "fc_1", "output": "2x fees"},
    ],
}
RESPONSE_OBJECT = {
    "id": "resp_1",
    "status": "incomplete",
    "incomplete_details": {"reason": "max_output_tokens"},
    "output": [
        {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "Look it up."}]},
        {"type": "message", "content": [{"type": "output_text", "text": "Twice the fees"}]},
    ],
}
RESPONSE_OUTPUT = [
    {
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "content": "Look it up."},
            {"type": "text", "content": "Twice the fees"},
        ],
        "finish_reason": "length",
    }
]


def test_a_responses_call_has_its_instructions_apart_and_its_items_as_messages() -> None:
    attrs = _attrs("/v1/responses", RESPONSES_REQUEST, orjson.dumps(RESPONSE_OBJECT))
    (instructions,) = _json(attrs, "gen_ai.system_instructions")
    assert instructions["type"] == "text" and "[REDACTED" in instructions["content"]
    user, call, result = _json(attrs, "gen_ai.input.messages")
    assert user == {"role": "user", "parts": [{"type": "text", "content": "What is the cap?"}]}
    assert call["role"] == "assistant" and call["parts"][0]["type"] == "tool_call"
    assert call["parts"][0]["id"] == "fc_1" and call["parts"][0]["arguments"] == {}
    assert result["parts"] == [{"type": "tool_call_response", "id": "fc_1", "response": "2x fees"}]
    assert _json(attrs, "gen_ai.output.messages") == RESPONSE_OUTPUT
    assert SECRET not in str(attrs)


def test_a_responses_stream_is_its_final_response_or_its_deltas_when_cut_short() -> None:
    whole = _sse(
        ("response.created", {"response": {"id": "resp_1", "output": []}}),
        ("response.output_text.delta", {"delta": "Twice"}),
        ("response.incomplete", {"response": RESPONSE_OBJECT}),
        named=True,
    )
    attrs = _attrs("/v1/responses", RESPONSES_REQUEST, whole, stream=True)
    assert _json(attrs, "gen_ai.output.messages") == RESPONSE_OUTPUT
    # The stored copy of a named stream is redacted event by event; the assembled text again.
    cut = _sse(
        ("response.created", {"response": {"id": "resp_1", "output": []}}),
        ("response.output_text.delta", {"delta": "Mail alice@exa"}),
        ("response.output_text.delta", {"delta": "mple.com now"}),
        named=True,
    )
    attrs = _attrs("/v1/responses", RESPONSES_REQUEST, cut, stream=True)
    (answer,) = _json(attrs, "gen_ai.output.messages")
    assert answer["finish_reason"] == "error"
    assert answer["parts"][0]["content"].startswith("Mail [REDACTED")
    assert "alice" not in str(attrs)


MESSAGES_REQUEST = {
    "model": "tiny",
    "system": [{"type": "text", "text": "Be brief."}],
    "messages": [
        {"role": "user", "content": "Cap?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "tu_1", "name": "lookup", "input": {"q": 1}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_1",
                    "content": [{"type": "text", "text": "2x"}],
                }
            ],
        },
    ],
}


def test_a_messages_call_has_its_system_apart_and_its_blocks_as_parts() -> None:
    response = {
        "id": "msg_1",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Short."},
            {"type": "text", "text": f"Twice, ask {SECRET}"},
        ],
        "stop_reason": "end_turn",
    }
    attrs = _attrs("/v1/messages", MESSAGES_REQUEST, orjson.dumps(response))
    assert _json(attrs, "gen_ai.system_instructions") == [{"type": "text", "content": "Be brief."}]
    user, assistant, result = _json(attrs, "gen_ai.input.messages")
    assert user == {"role": "user", "parts": [{"type": "text", "content": "Cap?"}]}
    assert assistant["parts"] == [
        {"type": "tool_call", "id": "tu_1", "name": "lookup", "arguments": {"q": 1}}
    ]
    assert result["parts"] == [
        {
            "type": "tool_call_response",
            "id": "tu_1",
            "response": [{"type": "text", "content": "2x"}],
        }
    ]
    (answer,) = _json(attrs, "gen_ai.output.messages")
    assert answer["finish_reason"] == "stop"
    assert answer["parts"][0] == {"type": "reasoning", "content": "Short."}
    assert answer["parts"][1]["content"].startswith("Twice, ask [REDACTED")


def test_a_messages_stream_is_assembled_block_by_block() -> None:
    stream = _sse(
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "content": []}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        (
            "content_block_delta",
            {"index": 0, "delta": {"type": "text_delta", "text": "Mail alice@ex"}},
        ),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "ample.com"}}),
        (
            "content_block_start",
            {
                "index": 1,
                "content_block": {"type": "tool_use", "id": "tu_2", "name": "send", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {"index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"to": 2}'}},
        ),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
        named=True,
    )
    attrs = _attrs("/v1/messages", MESSAGES_REQUEST, stream, stream=True)
    (answer,) = _json(attrs, "gen_ai.output.messages")
    text, call = answer["parts"]
    assert text["content"].startswith("Mail [REDACTED") and "alice" not in str(attrs)
    assert call == {"type": "tool_call", "id": "tu_2", "name": "send", "arguments": {"to": 2}}
    assert answer["finish_reason"] == "tool_call"


@pytest.mark.parametrize("latest", [False, True])
def test_teams_that_do_not_store_bodies_get_no_text_under_either_conventions(latest: bool) -> None:
    response = orjson.dumps({"choices": [{"index": 0, "message": {"content": "the cap is 2x"}}]})
    attrs = _attrs("/v1/chat/completions", CHAT_REQUEST, response, latest=latest, store_body=False)
    for name in CONTENT:
        assert name not in attrs, name
    assert "cap" not in str(attrs)


def test_the_v1_36_conventions_have_no_message_attributes_so_the_stored_bodies_are_carried() -> (
    None
):
    response = orjson.dumps({"choices": [{"index": 0, "message": {"content": f"to {SECRET}"}}]})
    attrs = _attrs("/v1/chat/completions", CHAT_REQUEST, response, latest=False)
    assert attrs["plumbline.request.body"] == POLICY.request(orjson.dumps(CHAT_REQUEST))
    assert attrs["plumbline.response.body"] == POLICY.response(response, False)
    assert not [name for name in attrs if name.startswith(("gen_ai.input", "gen_ai.output"))]
    assert SECRET not in str(attrs)


def test_bodies_without_the_conventions_structure_stay_the_stored_bodies() -> None:
    # Embeddings have no messages; an error answer is no output message.
    attrs = _attrs("/v1/embeddings", {"input": "hi"}, orjson.dumps({"data": []}))
    assert "gen_ai.input.messages" not in attrs and "gen_ai.output.messages" not in attrs
    assert orjson.loads(attrs["plumbline.request.body"]) == {"input": "hi"}
    error = orjson.dumps({"error": {"message": "bad", "type": "BadRequestError"}})
    attrs = _attrs("/v1/chat/completions", CHAT_REQUEST, error)
    assert "gen_ai.input.messages" in attrs and "gen_ai.output.messages" not in attrs
    assert orjson.loads(attrs["plumbline.response.body"])["error"]["message"] == "bad"


def test_long_messages_are_cut_to_the_bound_keeping_their_structure() -> None:
    request = {
        "messages": [{"role": "user", "content": "x" * 200_000}, {"role": "user", "content": "end"}]
    }
    response = orjson.dumps({"choices": [{"index": 0, "message": {"content": "y" * 100_000}}]})
    attrs = _attrs("/v1/chat/completions", request, response)
    for name in ("gen_ai.input.messages", "gen_ai.output.messages"):
        assert len(attrs[name]) <= MAX_BODY_CHARS
    first, last = _json(attrs, "gen_ai.input.messages")
    assert first["role"] == "user" and first["parts"][0]["type"] == "text"
    assert first["parts"][0]["content"].endswith("…") and len(first["parts"][0]["content"]) > 8000
    assert last["parts"][0]["content"] == "end"
    (answer,) = _json(attrs, "gen_ai.output.messages")
    assert answer["parts"][0]["content"].startswith("yyy")


def test_too_many_messages_keep_the_latest_that_fit() -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": str(i)}]} for i in range(5000)
    ]
    text = bounded_json(messages, 2000)
    kept = orjson.loads(text)
    assert len(text) <= 2000 and 0 < len(kept) < 5000
    assert kept[-1]["parts"][0]["content"] == "4999"
    assert bounded_json(messages[:1], 5) == "[]"
    # Names and kinds are not cut below their own bound.
    huge_id = [{"role": "tool", "parts": [{"type": "tool_call", "id": "i" * 10_000}]}]
    assert len(bounded_json(huge_id, 1000)) <= 1000


DEEP = "[" * 1000 + "]" * 1000
ODD_REQUESTS = [
    {"messages": 5},
    {"messages": {"role": "user"}},
    {"messages": ["hi", 3, None, {"role": ["x"], "content": 7, "tool_calls": 9}]},
    {"messages": [{"role": "assistant", "tool_calls": [5, {"function": "f", "arguments": DEEP}]}]},
    {"prompt": 7},
    {"prompt": [[1, 2], None]},
    {"input": 5, "instructions": ["x"]},
    {"input": [5, {"type": "function_call", "arguments": DEEP}, {"role": "user", "content": 3}]},
    {"system": 5, "messages": [{"content": [5, {"type": "tool_result", "content": 3}]}]},
    [1, 2],
    "not an object",
]
ODD_RESPONSES = [
    b'{"choices": 5, "output": 3, "content": "plain"}',
    b'{"choices": [5, {"index": [1], "message": {"tool_calls": 3, "content": 4}}]}',
    b'{"output": [5, {"type": "function_call", "arguments": "' + b"[" * 300 + b'"}]}',
    b'{"content": [5, {"type": "tool_use"}], "stop_reason": {"a": 1}}',
    b'data: {"choices": [{"index": {"a": 1}, "delta": {"tool_calls": [{"index": [2]}]}}]}\n\n',
    b"data: [1, 2]\n\ndata: {not json\n\ndata: [DONE]\n\n",
    b"event: response.output_text.delta\ndata: [1]\n\n"
    b'event: response.completed\ndata: {"response": 5}\n\n',
    b'event: content_block_start\ndata: {"index": [1], "content_block": {"type": "tool_use"}}\n\n'
    b'event: content_block_delta\ndata: {"index": {"x": 1}, "delta": {"partial_json": "[[["}}\n\n',
    b"[]",
    b"",
]


@pytest.mark.parametrize(
    "endpoint", ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages"]
)
@pytest.mark.parametrize("request_body", ODD_REQUESTS)
def test_odd_request_bodies_never_fail_the_span(endpoint: str, request_body: Any) -> None:
    attrs = _attrs(endpoint, request_body, b"{}")
    for name in ("gen_ai.system_instructions", "gen_ai.input.messages"):
        if name in attrs:
            assert isinstance(orjson.loads(attrs[name]), list)
            assert len(attrs[name]) <= MAX_BODY_CHARS


@pytest.mark.parametrize(
    "endpoint", ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages"]
)
@pytest.mark.parametrize("response", ODD_RESPONSES)
@pytest.mark.parametrize("stream", [False, True])
def test_odd_response_bodies_never_fail_the_span(
    endpoint: str, response: bytes, stream: bool
) -> None:
    attrs = _attrs(endpoint, CHAT_REQUEST, response, stream=stream)
    if "gen_ai.output.messages" in attrs:
        messages = orjson.loads(attrs["gen_ai.output.messages"])
        assert all({"role", "parts", "finish_reason"} <= set(m) for m in messages)
