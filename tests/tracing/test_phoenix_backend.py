"""The Phoenix fixture itself: a span sent over OTLP/HTTP comes back through Phoenix's REST API
with its ids, parent and attributes as sent, so tests built on it can trust what it reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.otlp_spans import PROTOBUF, export_request, new_span_id, new_trace_id
from tests.support.phoenix import PhoenixProcess, running_phoenix

ATTRIBUTES: dict[str, str | int | float | bool] = {
    "plumbline.call_id": "call-123",
    "gen_ai.usage.input_tokens": 12,
    "plumbline.ttft_s": 0.25,
    "plumbline.stream": True,
}


@pytest.fixture(scope="module")
def phoenix() -> Iterator[PhoenixProcess]:
    """A real Phoenix on loopback for this module."""
    with running_phoenix() as server:
        yield server


def post_span(phoenix: PhoenixProcess, body: bytes) -> None:
    reply = httpx.post(phoenix.otlp_traces_url, content=body, headers=PROTOBUF, timeout=30)
    assert reply.status_code == 200, reply.text


def test_a_span_sent_over_otlp_is_read_back_with_its_ids_parent_and_attributes(
    phoenix: PhoenixProcess,
) -> None:
    trace_id, root_id, child_id = new_trace_id(), new_span_id(), new_span_id()
    post_span(phoenix, export_request("client request", trace_id, root_id, None, {}))
    post_span(phoenix, export_request("chat tiny", trace_id, child_id, root_id, ATTRIBUTES))

    child = phoenix.wait_for_span("chat tiny", trace_id)
    root = phoenix.wait_for_span("client request", trace_id)

    assert (child.trace_id, child.span_id, child.parent_id) == (trace_id, child_id, root_id)
    assert (root.span_id, root.parent_id) == (root_id, None)
    assert {k: child.attributes.get(k) for k in ATTRIBUTES} == ATTRIBUTES


def test_spans_of_other_traces_are_not_read_back(phoenix: PhoenixProcess) -> None:
    mine, other = new_trace_id(), new_trace_id()
    post_span(phoenix, export_request("other", other, new_span_id(), None, {}))
    post_span(phoenix, export_request("mine", mine, new_span_id(), None, {}))
    phoenix.wait_for_span("mine", mine)
    phoenix.wait_for_span("other", other)

    assert [span.name for span in phoenix.spans(mine)] == ["mine"]


def test_a_missing_phoenix_env_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PLUMBLINE_PHOENIX_VENV", str(tmp_path))
    with pytest.raises(RuntimeError, match="make phoenix-env"):
        PhoenixProcess()
