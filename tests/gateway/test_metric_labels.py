"""GatewayMetrics labels calls by bounded values: a path nobody routes is `other`."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client import generate_latest

from gateway.metrics import CALL_LABELS, GatewayMetrics
from gateway.proxy.call_kinds.served import served_kinds
from gateway.recording.observation import CallObservation

ROUTES = [kind.path for kind in served_kinds()]
CALL = CallObservation(
    model="tiny",
    backend="http://b1",
    team="a",
    feature="chat",
    endpoint="/v1/responses",
    status_code=200,
    cancelled=False,
    error_type=None,
    prompt_tokens=3,
    completion_tokens=2,
    input_cost=1e-6,
    output_cost=3e-6,
    ttft_ms=10.0,
    itl_mean_ms=2.0,
    decode_ms=4.0,
    engine_queue_ms=None,
    engine_prefill_ms=None,
    e2e_ms=20.0,
    overhead_s=0.0004,
)


def _endpoints(metrics: GatewayMetrics, name: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name == name:
                endpoint = sample.labels["endpoint"]
                found[endpoint] = found.get(endpoint, 0.0) + sample.value
    return found


def test_served_routes_keep_their_name_and_any_other_path_is_other() -> None:
    metrics = GatewayMetrics(["chat"], ["tiny"], ROUTES)
    metrics.observe(CALL)
    metrics.observe(replace(CALL, endpoint="/v1/chat/completions"))
    metrics.observe(replace(CALL, endpoint="/v1/responses/resp_123/cancel"))
    metrics.observe(replace(CALL, endpoint="/../../etc/passwd"))
    assert _endpoints(metrics, "plumbline_calls_total") == {
        "/v1/responses": 1.0,
        "/v1/chat/completions": 1.0,
        "other": 2.0,
    }
    assert set(_endpoints(metrics, "plumbline_overhead_seconds_count")) == {
        "/v1/responses",
        "/v1/chat/completions",
        "other",
    }
    assert b"passwd" not in generate_latest(metrics.registry)


def test_every_call_metric_carries_the_endpoint_label() -> None:
    metrics = GatewayMetrics(["chat"], ["tiny"], ROUTES)
    metrics.observe(replace(CALL, status_code=503, error_type="ServiceUnavailableError"))
    labelled = {
        sample.name.removesuffix("_total").rsplit("_bucket", 1)[0]
        for family in metrics.registry.collect()
        for sample in family.samples
        if "endpoint" in sample.labels
    }
    assert {
        "plumbline_calls",
        "plumbline_errors",
        "plumbline_tokens",
        "plumbline_cost",
        "plumbline_ttft_seconds",
        "plumbline_itl_seconds",
        "plumbline_decode_seconds",
        "plumbline_e2e_seconds",
        "plumbline_overhead_seconds",
    } <= labelled
    assert "endpoint" in CALL_LABELS
