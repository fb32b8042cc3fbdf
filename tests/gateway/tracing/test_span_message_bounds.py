"""Messages on spans from hostile stored bodies: tool results' media, deep nesting, sheer size."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.spans import call_span
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
