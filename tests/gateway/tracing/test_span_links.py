"""A call sent for an eval question: its record keeps the link, its span carries it."""

from __future__ import annotations

import pickle

from gateway.config import RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.call_trace import CallTrace, linked
from gateway.tracing.spans import call_span
from plumbline.otlp.trace_context import ParentContext
from tests.support.records import make_record

RUN_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
QUESTION_SPAN = "00f067aa0ba902b7"
TRACED = CallTrace("1" * 32, "2" * 16, None, True)


def _record(link: ParentContext | None) -> CallRecord:
    return make_record(trace_id="1" * 32, span_id="2" * 16, trace_sampled=True, trace_link=link)


def test_the_span_links_to_the_question_span_as_a_remote_context() -> None:
    record = _record(ParentContext(RUN_TRACE, QUESTION_SPAN, True))
    row, _ = call_row(record, RedactionPolicy(RedactionConfig(enabled=True)))
    (link,) = call_span(record, row).links
    assert (link.trace_id.hex(), link.span_id.hex(), link.flags) == (
        RUN_TRACE,
        QUESTION_SPAN,
        0x301,
    )


def test_a_call_without_a_link_has_none() -> None:
    record = _record(None)
    row, _ = call_row(record, RedactionPolicy(RedactionConfig(enabled=True)))
    assert list(call_span(record, row).links) == []


def test_the_link_survives_the_hand_off_to_the_recorder_process() -> None:
    record = _record(ParentContext(RUN_TRACE, QUESTION_SPAN, False))
    assert pickle.loads(pickle.dumps(record)) == record


def test_a_link_is_kept_only_when_one_valid_value_came_and_the_call_is_traced() -> None:
    valid = f"00-{RUN_TRACE}-{QUESTION_SPAN}-01"
    assert linked(TRACED, [valid]).link == ParentContext(RUN_TRACE, QUESTION_SPAN, True)
    assert linked(TRACED, [valid, valid]).link is None
    assert linked(TRACED, ["00-" + RUN_TRACE]).link is None
    # Tracing off: no span of the gateway's to link from.
    assert linked(CallTrace(), [valid]).link is None
