"""OTLP attribute values from plain Python values."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource


def any_value(value: Any) -> AnyValue:
    """The OTLP AnyValue of a bool, int, float, list or (otherwise) its string form."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list | tuple):
        return AnyValue(array_value=ArrayValue(values=[any_value(item) for item in value]))
    return AnyValue(string_value=str(value))


def key_values(attributes: dict[str, Any]) -> list[KeyValue]:
    """OTLP attributes of a dict; None values are left out, as the conventions ask."""
    return [KeyValue(key=k, value=any_value(v)) for k, v in attributes.items() if v is not None]


def process_resource(service_name: str, attributes: dict[str, str], instance_id: str) -> Resource:
    """The resource of one exporting process: its service and a `service.instance.id`.

    Cumulative series and spans of several processes must not collide, so each process is its
    own instance; an id the operator set in OTEL_RESOURCE_ATTRIBUTES is theirs to keep unique.
    """
    resource = {"service.instance.id": instance_id} | attributes | {"service.name": service_name}
    return Resource(attributes=key_values(resource))
