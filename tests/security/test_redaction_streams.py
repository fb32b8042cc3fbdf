"""Streams of every call kind are redacted per output, and a hostile stream is still recorded."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.recording.redaction import Redactor
from gateway.recording.rows import build_rows
from gateway.recording.stored_text import MAX_KEPT_TEXTS, RedactionPolicy, response_body
from gateway.tracing.output_messages import output_messages
from tests.support.records import make_record

EMAIL = "jane.roe@example.com"
EMAIL_CUT = ("Write to jane.ro", "e@exam", "ple.com now")
CARD_CUT = (
    "pay with 4111 1111 ",
    "1111 1111 thanks",
)


def _named(name: str, data: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def _responses_stream(pieces: tuple[str, ...], output_index: Any = 0) -> bytes:
    deltas = [
        _named(
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "output_index": output_index,
                "content_index": 0,
                "delta": piece,
                "logprobs": [{"token": piece, "logprob": -0.5, "top_logprobs": [{"token": piece}]}],
            },
        )
        for piece in pieces
    ]
    head = _named("response.created", {"type": "response.created", "response": {"id": "r"}})
    return head + b"".join(deltas)


def _messages_stream(pieces: tuple[str, ...]) -> bytes:
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    deltas = [
        _named(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        )
        for p in pieces
    ]
    stop = _named("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    return _named("content_block_start", start) + b"".join(deltas) + stop


def _email_free(stored: str) -> None:
    # Every piece that carried part of the address lost it, wherever it was cut.
    assert EMAIL not in stored and "e@exam" not in stored and "ple.com" not in stored
    assert "jane.ro" not in stored and "[REDACTED:email]" in stored


def test_a_secret_cut_across_responses_deltas_is_redacted_in_the_stored_stream() -> None:
    stored = response_body(_responses_stream(EMAIL_CUT), True, Redactor())
    _email_free(stored)
    events = [e for e in stored.split("\n\n") if e.startswith("event: response.output_text")]
    deltas = [orjson.loads(e.split("\ndata: ", 1)[1]) for e in events]
    assert "".join(d["delta"] for d in deltas) == "Write to [REDACTED:email] now"
    # The sampled tokens are one text as well; the alternatives where it changed are masked.
    assert "".join(d["logprobs"][0]["token"] for d in deltas) == "Write to [REDACTED:email] now"
    assert deltas[1]["logprobs"][0]["top_logprobs"][0]["token"] == "[REDACTED]"
    # Still a stream the dashboard shows and the span reads.
    (message,) = output_messages("/v1/responses", stored, True) or []
    assert message["parts"] == [{"type": "text", "content": "Write to [REDACTED:email] now"}]


def test_responses_final_events_mask_their_logprob_tokens_as_one_text() -> None:
    def part() -> dict[str, Any]:
        tokens = [{"token": t, "logprob": -1.0, "top_logprobs": [{"token": t}]} for t in EMAIL_CUT]
        return {"type": "output_text", "text": "".join(EMAIL_CUT), "logprobs": tokens}

    item = {"type": "message", "content": [part()]}
    body = b"".join(
        (
            _named("response.content_part.done", {"type": "x", "part": part()}),
            _named("response.output_item.done", {"type": "x", "item": item}),
            _named("response.completed", {"type": "x", "response": {"output": [dict(item)]}}),
        )
    )
    stored = response_body(body, True, Redactor())
    _email_free(stored)
    assert stored.count('"token":"[REDACTED]"') == 3 * 3  # every token held part of it, thrice
    whole = response_body(orjson.dumps({"output": [{"content": [part()]}]}), False, Redactor())
    _email_free(whole)


def test_a_secret_cut_across_messages_deltas_is_redacted_in_the_stored_stream() -> None:
    stored = response_body(_messages_stream(CARD_CUT), True, Redactor())
    assert "4111 1111 " not in stored and "1111 1111 thanks" not in stored
    (message,) = output_messages("/v1/messages", stored, True) or []
    assert message["parts"] == [{"type": "text", "content": "pay with [REDACTED:card] thanks"}]
    assert message["finish_reason"] == "stop"
    assert stored.startswith("event: content_block_start\ndata: {")


def test_items_and_blocks_are_separate_texts() -> None:
    # Two outputs whose pieces only make an address when joined: nothing to redact.
    body = _responses_stream(("jane.roe",), 0) + _responses_stream(("@example.com",), 1)
    stored = response_body(body, True, Redactor())
    assert "[REDACTED" not in stored and "jane.roe" in stored


def test_chat_reasoning_and_tool_arguments_are_one_text_per_choice() -> None:
    def chunk(delta: dict[str, Any]) -> bytes:
        return b"data: " + orjson.dumps({"choices": [{"index": 0, "delta": delta}]}) + b"\n\n"

    call = {"index": 0, "function": {"arguments": '{"to": "jane.roe@'}}
    rest = {"index": 0, "function": {"arguments": 'example.com"}'}}
    body = b"".join(
        (
            chunk({"reasoning_content": "mail jane.roe@"}),
            chunk({"reasoning_content": "example.com"}),
            chunk({"tool_calls": [call]}),
            chunk({"tool_calls": [rest]}),
            b"data: [DONE]\n\n",
        )
    )
    stored = response_body(body, True, Redactor())
    assert "example.com" not in stored and stored.count("[REDACTED:email]") == 2
    assert stored.endswith("data: [DONE]\n\n")


HOSTILE_STREAMS = {
    "many events": _responses_stream(("x",) * 4_000) + _responses_stream(EMAIL_CUT),
    "a huge delta": _messages_stream((EMAIL + " " + "y" * 3_000_000,)),
    "not json": b"event: response.output_text.delta\ndata: {oops " + EMAIL.encode() + b"\n\n",
    "unknown events": _named("response.made_up.delta", {"delta": 5, "output_index": [1]})
    + _named("content_block_delta", {"index": {"a": 1}, "delta": "text " + EMAIL})
    + _named("surprise", [{"choices": {"0": EMAIL}}])
    + b"event: \n\nevent: x\ndata:\n\n: comment\n\n"
    + _responses_stream(EMAIL_CUT, output_index={"x": 1}),
    "odd values": b"event: content_block_delta\ndata: 5\n\ndata: null\n\n"
    + _named("content_block_delta", {"type": 7, "delta": {"text": ["a"], "thinking": EMAIL}}),
}


@pytest.mark.parametrize("body", HOSTILE_STREAMS.values(), ids=HOSTILE_STREAMS.keys())
@pytest.mark.parametrize("endpoint", ["/v1/responses", "/v1/messages", "/v1/chat/completions"])
def test_a_hostile_stream_is_still_recorded_and_redacted(endpoint: str, body: bytes) -> None:
    record = make_record(endpoint=endpoint, store_body=True, request_body=b"{}", response_body=body)
    policy = RedactionPolicy(RedactionConfig(enabled=True))
    batch = build_rows([record], policy)
    assert [row["id"] for row in batch.calls] == [record.id]
    (stored,) = batch.bodies
    assert EMAIL not in stored["response_body"] and "e@exam" not in stored["response_body"]
    # Cut to the stored bound first, so the work is bounded too.
    assert len(stored["response_body"]) < 2 * policy.max_body_bytes


def test_short_strings_past_the_walks_memory_are_still_redacted() -> None:
    # More distinct short strings than the walk keeps, each a secret, then the first ones again.
    notes = [f"u{i}@corp.io" for i in range(MAX_KEPT_TEXTS + 50)]
    body = b"".join(_named("note", {"note": n, "type": "note"}) for n in notes + notes[:50])
    stored = response_body(body, True, Redactor())
    assert "@corp.io" not in stored
    assert stored.count("[REDACTED:email]") == len(notes) + 50
