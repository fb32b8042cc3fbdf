"""The recorder process exports the spans of the records it writes, and a bad collector costs
the database nothing: every row is written whether the collector answers, is down or hangs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.config import RecordingConfig
from gateway.recording.recorder_process import RecorderProcess
from plumbline.models import Call
from tests.support.databases import count_rows, postgres_database
from tests.support.otlp_receiver import HungCollector, OtlpReceiver, free_port_url
from tests.support.records import make_record
from tests.support.waiting import wait_until

QUEUE = 40


@pytest.fixture
def database_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


def _export_to(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    # The recorder process inherits these, as it does from a gateway started with them.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", base_url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=k%3D1")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "gw-recorder-test")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=ci")
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", str(QUEUE))
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
    monkeypatch.setenv("OTEL_BSP_EXPORT_TIMEOUT", "2000")


def _send(database_url: str, spool: Path, count: int) -> RecorderProcess:
    config = RecordingConfig(flush_interval_ms=20, batch_size=50, spool_dir=spool)
    recorder = RecorderProcess(database_url, 2, config)
    recorder.start()
    for i in range(count):
        recorder.submit(
            make_record(
                tokens=4,
                trace_id=f"{i + 1:032x}",
                span_id=f"{i + 1:016x}",
                parent_span_id="b7ad6b7169203331",
                trace_sampled=i % 5 != 0,
            )
        )
    return recorder


def test_sampled_calls_reach_the_collector_as_spans_of_their_rows(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OtlpReceiver() as receiver:
        _export_to(monkeypatch, receiver.url)
        recorder = _send(database_url, tmp_path / "spool", 30)
        try:
            assert recorder.flush(timeout=30)
            wait_until(lambda: len(receiver.spans) == 24, timeout=30, what="24 sampled spans")
            wait_until(
                lambda: recorder.stats.trace_exported == 24, timeout=30, what="exports reported"
            )
        finally:
            recorder.stop()
    assert count_rows(database_url, Call) == 30
    span = receiver.spans[0]
    assert span.headers["x-collector-key"] == "k=1"
    assert span.resource["service.name"] == "gw-recorder-test"
    assert span.resource["deployment.environment.name"] == "ci"
    assert span.attributes["gen_ai.provider.name"] == "vllm"
    assert span.span.parent_span_id.hex() == "b7ad6b7169203331"


@pytest.mark.parametrize("collector", ["down", "hung"])
def test_a_failing_collector_never_holds_up_the_rows_and_its_drops_are_counted(
    collector: str, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with HungCollector() as hung:
        _export_to(monkeypatch, hung.url if collector == "hung" else free_port_url())
        # More sampled calls than the span queue holds.
        recorder = _send(database_url, tmp_path / "spool", 5 * QUEUE)
        try:
            assert recorder.flush(timeout=30)
            assert count_rows(database_url, Call) == 5 * QUEUE
            wait_until(
                lambda: (
                    recorder.stats.trace_dropped_queue_full > 0
                    and recorder.stats.trace_dropped_export_failed > 0
                ),
                timeout=30,
                what="drops reported",
            )
        finally:
            recorder.stop()
    stats = recorder.stats
    assert stats.written == 5 * QUEUE and stats.trace_exported == 0
    sampled = 4 * QUEUE
    assert stats.trace_dropped_queue_full + stats.trace_dropped_export_failed == sampled
    assert stats.trace_dropped_queue_full >= sampled - QUEUE - 10
