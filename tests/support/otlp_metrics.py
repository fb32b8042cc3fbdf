"""Histogram points out of the OTLP metric exports an OtlpReceiver decoded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.metrics.v1.metrics_pb2 import HistogramDataPoint

from tests.support.otlp_receiver import OtlpReceiver, attributes


@dataclass(frozen=True)
class ReceivedPoint:
    """One histogram data point with its metric, scope and resource."""

    name: str
    unit: str
    temporality: int
    schema_url: str
    resource: dict[str, Any]
    attributes: dict[str, Any]
    point: HistogramDataPoint
    headers: dict[str, str]


def export_points(receiver: OtlpReceiver) -> list[list[ReceivedPoint]]:
    """The histogram points of each export request received, in arrival order."""
    exports = []
    for request, headers in list(receiver.metrics):
        points = []
        for resource_metrics in request.resource_metrics:
            resource = attributes(resource_metrics.resource.attributes)
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    temporality = metric.histogram.aggregation_temporality
                    points.extend(
                        ReceivedPoint(
                            metric.name,
                            metric.unit,
                            temporality,
                            scope.schema_url,
                            resource,
                            attributes(point.attributes),
                            point,
                            headers,
                        )
                        for point in metric.histogram.data_points
                    )
        exports.append(points)
    return exports


def latest_points(receiver: OtlpReceiver) -> list[ReceivedPoint]:
    """The points of the last export received (cumulative: everything so far)."""
    exports = export_points(receiver)
    return exports[-1] if exports else []


def of_metric(points: list[ReceivedPoint], name: str) -> list[ReceivedPoint]:
    """The points of one metric."""
    return [point for point in points if point.name == name]
