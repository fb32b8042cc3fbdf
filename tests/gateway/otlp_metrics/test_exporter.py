"""The metric exporter against a real loopback receiver that decodes the OTLP protobuf."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from gateway.otlp_metrics.exporter import MetricExporter
from gateway.otlp_metrics.instruments import INSTRUMENTS, OPERATION_DURATION, TOKEN_USAGE
from gateway.otlp_metrics.settings import MetricExportSettings
from gateway.recording.rows import call_row
from gateway.tracing.spans import SCHEMA_URL, SEMCONV_DEFAULT
from plumbline.otlp.settings import OtlpTarget
from tests.support.otlp_metrics import export_points, latest_points, of_metric
from tests.support.otlp_receiver import HungCollector, OtlpReceiver, free_port_url
from tests.support.records import make_record
from tests.support.waiting import wait_until

CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
DELTA = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA


def _settings(base_url: str, **fields: Any) -> MetricExportSettings:
    target = OtlpTarget(
        endpoint=f"{base_url}/v1/metrics",
        headers={"authorization": "Bearer collector-token"},
        timeout_s=0.3,
        service_name="gw-test",
        resource_attributes={"deployment.environment.name": "test"},
    )
    values: dict[str, Any] = dict(target=target, interval_s=60.0, timeout_s=1.0)
    return MetricExportSettings(**(values | fields))


def _offer(exporter: MetricExporter, count: int, tokens: int = 5) -> list[dict[str, Any]]:
    rows = []
    for _ in range(count):
        record = make_record(tokens=tokens)
        row, _ = call_row(record)
        exporter.offer(record, row)
        rows.append(row)
    return rows


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def test_an_export_carries_the_four_histograms_with_units_bounds_and_the_rows_values(
    receiver: OtlpReceiver,
) -> None:
    exporter = MetricExporter(_settings(receiver.url))
    rows = _offer(exporter, 3)
    assert exporter.export() is True
    points = latest_points(receiver)
    assert {p.name for p in points} == {i.name for i in INSTRUMENTS}
    instruments = {instrument.name: instrument for instrument in INSTRUMENTS}
    for point in points:
        instrument = instruments[point.name]
        assert point.unit == instrument.unit
        assert tuple(point.point.explicit_bounds) == instrument.bounds
        assert len(point.point.bucket_counts) == len(instrument.bounds) + 1
        assert sum(point.point.bucket_counts) == point.point.count
        assert point.temporality == CUMULATIVE
    [duration] = of_metric(points, OPERATION_DURATION.name)
    assert duration.point.count == 3
    assert duration.point.sum == pytest.approx(sum(r["e2e_ms"] for r in rows) / 1000)
    tokens = {p.attributes["gen_ai.token.type"]: p for p in of_metric(points, TOKEN_USAGE.name)}
    assert tokens["input"].point.sum == sum(r["prompt_tokens"] for r in rows)
    assert tokens["output"].point.sum == sum(r["completion_tokens"] for r in rows)
    assert tokens["output"].unit == "{token}"
    assert duration.resource["service.name"] == "gw-test"
    assert duration.resource["deployment.environment.name"] == "test"
    assert duration.schema_url == SCHEMA_URL.format(SEMCONV_DEFAULT)
    assert duration.headers["authorization"] == "Bearer collector-token"
    assert exporter.counts()["metric_exported"] == 1


def test_each_exporter_is_its_own_service_instance(receiver: OtlpReceiver) -> None:
    for _ in range(2):
        exporter = MetricExporter(_settings(receiver.url))
        _offer(exporter, 1)
        assert exporter.export()
    ids = {points[0].resource["service.instance.id"] for points in export_points(receiver)}
    assert len(ids) == 2


def test_cumulative_exports_repeat_the_totals_and_delta_exports_only_the_new(
    receiver: OtlpReceiver,
) -> None:
    for delta in (False, True):
        exporter = MetricExporter(_settings(receiver.url, delta=delta))
        _offer(exporter, 2)
        exporter.export()
        _offer(exporter, 1)
        exporter.export()
        first, second = export_points(receiver)[-2:]
        [before] = of_metric(first, OPERATION_DURATION.name)
        [after] = of_metric(second, OPERATION_DURATION.name)
        assert after.temporality == (DELTA if delta else CUMULATIVE)
        assert (before.point.count, after.point.count) == ((2, 1) if delta else (2, 3))
        if delta:
            assert after.point.start_time_unix_nano == before.point.time_unix_nano
        else:
            assert after.point.start_time_unix_nano == before.point.start_time_unix_nano
        # Nothing new: a delta exporter sends nothing, a cumulative one the same totals.
        assert exporter.export() is (None if delta else True)


def test_nothing_recorded_means_nothing_sent(receiver: OtlpReceiver) -> None:
    exporter = MetricExporter(_settings(receiver.url))
    assert exporter.export() is None
    assert receiver.requests == 0


@pytest.mark.parametrize("collector", ["refusing", "down"])
def test_a_failed_export_is_counted(collector: str, receiver: OtlpReceiver) -> None:
    receiver.status = 400
    url = receiver.url if collector == "refusing" else free_port_url()
    exporter = MetricExporter(_settings(url))
    _offer(exporter, 2)
    assert exporter.export(tries=2) is False
    assert exporter.counts() == {
        "metric_exported": 0,
        "metric_export_failed": 1,
        "metric_overflowed": 0,
    }


def test_the_thread_exports_every_interval_and_once_more_at_stop(receiver: OtlpReceiver) -> None:
    exporter = MetricExporter(_settings(receiver.url, interval_s=0.05))
    exporter.start()
    try:
        _offer(exporter, 1)
        wait_until(lambda: len(receiver.metrics) >= 2, timeout=10, what="two periodic exports")
        _offer(exporter, 4)
    finally:
        exporter.stop()
    [duration] = of_metric(latest_points(receiver), OPERATION_DURATION.name)
    assert duration.point.count == 5


def test_a_hung_collector_holds_up_no_measurement_and_the_stop_is_bounded() -> None:
    with HungCollector() as hung:
        exporter = MetricExporter(_settings(hung.url, interval_s=0.02, cardinality_limit=50))
        exporter.start()
        try:
            for index in range(500):
                record = make_record(tokens=3, model=f"m{index}")
                exporter.offer(record, call_row(record)[0])
            wait_until(
                lambda: exporter.counts()["metric_export_failed"] >= 1,
                timeout=30,
                what="an export to the hung collector counted as failed",
            )
        finally:
            exporter.stop()
    counts = exporter.counts()
    assert counts["metric_exported"] == 0
    # 500 models, at most 50 attribute sets each: the rest are counted in the overflow set.
    assert counts["metric_overflowed"] > 0
    collected = exporter.aggregator.collect()
    assert all(len(points) <= 50 for points in collected.points.values())
