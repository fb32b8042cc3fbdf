"""The span exporter against a real loopback collector: batches arrive; failures drop, bounded."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.exporter import SpanExporter
from gateway.tracing.spans import SCHEMA_URL, SEMCONV_LATEST
from plumbline.otlp.settings import OtlpTarget, TraceExportSettings
from plumbline.otlp.transport import TRIES
from tests.support.otlp_receiver import HungCollector, OtlpReceiver, free_port_url
from tests.support.records import make_record
from tests.support.waiting import wait_until

CONTENT = (
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "plumbline.request.body",
    "plumbline.response.body",
)


def _settings(base_url: str, timeout_s: float = 0.3, **fields: Any) -> TraceExportSettings:
    target = OtlpTarget(
        endpoint=f"{base_url}/v1/traces",
        headers={"authorization": "Bearer collector-token"},
        timeout_s=timeout_s,
        service_name="gw-test",
        resource_attributes={"deployment.environment.name": "test"},
    )
    values: dict[str, Any] = dict(
        target=target,
        max_queue_size=50,
        schedule_delay_s=0.02,
        max_export_batch_size=10,
        export_timeout_s=2.0,
        latest_semconv=True,
    )
    return TraceExportSettings(**(values | fields))


def _traced(index: int, sampled: bool = True) -> tuple[CallRecord, dict[str, Any]]:
    record = make_record(
        tokens=3,
        trace_id=f"{index + 1:032x}",
        span_id=f"{index + 1:016x}",
        trace_sampled=sampled,
    )
    row, _ = call_row(record)
    return record, row


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def test_sampled_calls_arrive_in_batches_with_headers_resource_and_schema(
    receiver: OtlpReceiver,
) -> None:
    exporter = SpanExporter(_settings(receiver.url))
    exporter.start()
    try:
        calls = [_traced(i) for i in range(25)]
        for record, row in [*calls, _traced(99, sampled=False)]:
            exporter.offer(record, row)
        wait_until(lambda: len(receiver.spans) == 25, timeout=20, what="25 spans")
    finally:
        exporter.stop()
    assert {s.attributes["plumbline.call.id"] for s in receiver.spans} == {r.id for r, _ in calls}
    first = receiver.spans[0]
    assert first.headers["authorization"] == "Bearer collector-token"
    assert first.headers["content-type"] == "application/x-protobuf"
    # One exporting process, one instance: every batch names the same one.
    assert len({span.resource["service.instance.id"] for span in receiver.spans}) == 1
    resource = {k: v for k, v in first.resource.items() if k != "service.instance.id"}
    assert resource == {"deployment.environment.name": "test", "service.name": "gw-test"}
    assert first.schema_url == SCHEMA_URL.format(SEMCONV_LATEST)
    assert receiver.requests >= 3, "batches hold at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans"
    assert exporter.counts() == {
        "trace_exported": 25,
        "trace_dropped_queue_full": 0,
        "trace_dropped_export_failed": 0,
        "trace_dropped_unbuildable": 0,
    }


def test_the_queue_never_holds_more_than_its_bound(receiver: OtlpReceiver) -> None:
    # Not started: nothing leaves the queue, so every offer past the bound is dropped.
    exporter = SpanExporter(_settings(receiver.url, max_queue_size=50))
    for i in range(170):
        exporter.offer(*_traced(i))
    assert exporter.dropped["queue_full"] == 120 and len(exporter._queue) == 50


def test_a_collector_that_is_down_costs_only_dropped_spans() -> None:
    exporter = SpanExporter(_settings(free_port_url()))
    exporter.start()
    try:
        for i in range(30):
            exporter.offer(*_traced(i))
        wait_until(
            lambda: exporter.dropped["export_failed"] == 30, timeout=30, what="30 failed spans"
        )
    finally:
        exporter.stop()
    assert exporter.exported == 0


def test_a_hung_collector_times_out_and_the_queue_stays_bounded() -> None:
    with HungCollector() as hung:
        exporter = SpanExporter(_settings(hung.url, max_queue_size=20, max_export_batch_size=5))
        exporter.start()
        try:
            for i in range(200):
                exporter.offer(*_traced(i))
                assert len(exporter._queue) <= 20
            wait_until(
                lambda: exporter.dropped["export_failed"] >= 5, timeout=30, what="a timed-out batch"
            )
        finally:
            exporter.stop()
    counts = exporter.counts()
    assert counts["trace_exported"] == 0 and counts["trace_dropped_queue_full"] >= 200 - 20 - 5
    assert counts["trace_dropped_queue_full"] + counts["trace_dropped_export_failed"] == 200


def test_retryable_statuses_are_tried_a_bounded_number_of_times(receiver: OtlpReceiver) -> None:
    receiver.status = 503
    exporter = SpanExporter(_settings(receiver.url))
    exporter.start()
    try:
        exporter.offer(*_traced(1))
        wait_until(lambda: exporter.dropped["export_failed"] == 1, timeout=30, what="a drop")
    finally:
        exporter.stop()
    assert receiver.requests == TRIES


def test_a_refused_batch_is_not_retried(receiver: OtlpReceiver) -> None:
    receiver.status = 400
    exporter = SpanExporter(_settings(receiver.url))
    exporter.start()
    try:
        exporter.offer(*_traced(1))
        wait_until(lambda: exporter.dropped["export_failed"] == 1, timeout=30, what="a drop")
    finally:
        exporter.stop()
    assert receiver.requests == 1


def test_a_record_whose_span_cannot_be_built_is_counted_and_the_rest_go(
    receiver: OtlpReceiver,
) -> None:
    exporter = SpanExporter(_settings(receiver.url))
    good, good_row = _traced(1)
    bad = replace(good, id="bad", trace_id="not hex at all, not at all!!!!!!")
    exporter.start()
    try:
        exporter.offer(bad, good_row)
        exporter.offer(good, good_row)
        wait_until(lambda: len(receiver.spans) == 1, timeout=20, what="the good span")
    finally:
        exporter.stop()
    assert exporter.dropped["unbuildable"] == 1


def test_bodies_go_only_for_teams_that_store_them_and_only_as_stored(
    receiver: OtlpReceiver,
) -> None:
    policy = RedactionPolicy(RedactionConfig())
    exporter = SpanExporter(_settings(receiver.url), policy=policy)
    request = b'{"messages": [{"role": "user", "content": "mail bob@example.com the cap"}]}'
    response = b'{"choices": [{"message": {"content": "Sent to bob@example.com."}}]}'
    stored, stored_row = _traced(1)
    stored = replace(
        stored, store_body=True, stream=False, request_body=request, response_body=response
    )
    private, private_row = _traced(2)
    private = replace(private, request_body=request, response_body=response)
    exporter.start()
    try:
        exporter.offer(stored, stored_row)
        exporter.offer(private, private_row)
        wait_until(lambda: len(receiver.spans) == 2, timeout=20, what="two spans")
    finally:
        exporter.stop()
    shown = receiver.span_of(stored.id)
    hidden = receiver.span_of(private.id)
    assert shown is not None and hidden is not None
    # The latest conventions: the messages, built from the bodies as stored.
    (asked,) = orjson.loads(shown.attributes["gen_ai.input.messages"])
    stored_request = orjson.loads(policy.request(request))
    assert asked["parts"][0]["content"] == stored_request["messages"][0]["content"]
    (answer,) = orjson.loads(shown.attributes["gen_ai.output.messages"])
    stored_response = orjson.loads(policy.response(response, False))
    assert answer["parts"][0]["content"] == stored_response["choices"][0]["message"]["content"]
    assert "bob@example.com" not in str(shown.attributes) and "the cap" in str(shown.attributes)
    assert "plumbline.request.body" not in shown.attributes
    for name in CONTENT:
        assert name not in hidden.attributes, name
