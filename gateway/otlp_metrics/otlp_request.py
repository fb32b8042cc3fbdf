"""An ExportMetricsServiceRequest (OTLP protobuf) of one collection."""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    AggregationTemporality,
    Histogram,
    HistogramDataPoint,
    Metric,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from gateway.otlp_metrics.aggregation import Collection
from plumbline.otlp.attributes import key_values

SCOPE = "plumbline.gateway"


def metrics_request(
    collection: Collection, resource: Resource, schema_url: str, *, delta: bool
) -> bytes:
    """The serialized request carrying every point of `collection`."""
    temporality = (
        AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
        if delta
        else AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    )
    metrics = []
    for instrument, points in collection.points.items():
        data_points = [
            HistogramDataPoint(
                attributes=key_values(dict(attributes)),
                start_time_unix_nano=collection.start_ns,
                time_unix_nano=collection.time_ns,
                count=point.count,
                sum=point.total,
                bucket_counts=point.buckets,
                explicit_bounds=instrument.bounds,
                min=point.low,
                max=point.high,
            )
            for attributes, point in points
        ]
        metrics.append(
            Metric(
                name=instrument.name,
                description=instrument.description,
                unit=instrument.unit,
                histogram=Histogram(data_points=data_points, aggregation_temporality=temporality),
            )
        )
    scope = ScopeMetrics(
        scope=InstrumentationScope(name=SCOPE), metrics=metrics, schema_url=schema_url
    )
    request = ExportMetricsServiceRequest(
        resource_metrics=[ResourceMetrics(resource=resource, scope_metrics=[scope])]
    )
    body: bytes = request.SerializeToString()
    return body
