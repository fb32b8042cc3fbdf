"""OTEL_METRICS_EXPORTER and the OTLP metric variables, as the OpenTelemetry spec has them."""

from __future__ import annotations

import pytest

from gateway.otlp_metrics.settings import DEFAULT_ENDPOINT, metric_export_settings
from plumbline.otlp.settings import OtlpSettingsError

COLLECTOR = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}


def test_unset_serves_prometheus_and_exports_otlp_only_with_an_endpoint() -> None:
    bare = metric_export_settings({})
    assert bare.prometheus and not bare.otlp
    configured = metric_export_settings(COLLECTOR)
    assert configured.prometheus and configured.target is not None
    assert configured.target.endpoint == "http://collector:4318/v1/metrics"
    own = metric_export_settings(
        COLLECTOR | {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://m.example/otlp/v1/metrics"}
    )
    assert own.target is not None and own.target.endpoint == "https://m.example/otlp/v1/metrics"


def test_the_spec_defaults() -> None:
    settings = metric_export_settings(COLLECTOR)
    assert settings.interval_s == 60.0 and settings.timeout_s == 30.0
    assert not settings.delta and not settings.latest_semconv
    assert settings.cardinality_limit == 2000
    assert settings.target is not None and settings.target.timeout_s == 10.0


@pytest.mark.parametrize(
    ("exporters", "prometheus", "otlp"),
    [
        ("otlp", False, True),
        ("prometheus", True, False),
        ("otlp,prometheus", True, True),
        (" Prometheus , OTLP ", True, True),
        ("none", False, False),
    ],
)
def test_a_set_exporter_list_is_exactly_what_runs(
    exporters: str, prometheus: bool, otlp: bool
) -> None:
    settings = metric_export_settings(COLLECTOR | {"OTEL_METRICS_EXPORTER": exporters})
    assert (settings.prometheus, settings.otlp) == (prometheus, otlp)


def test_otlp_asked_for_without_an_endpoint_goes_to_the_spec_default() -> None:
    settings = metric_export_settings({"OTEL_METRICS_EXPORTER": "otlp"})
    assert settings.target is not None and settings.target.endpoint == DEFAULT_ENDPOINT


def test_the_sdk_disabled_turns_otlp_off_and_leaves_prometheus_to_the_exporter_list() -> None:
    disabled = COLLECTOR | {"OTEL_SDK_DISABLED": "true"}
    assert metric_export_settings(disabled).prometheus
    assert not metric_export_settings(disabled).otlp
    listed = metric_export_settings(disabled | {"OTEL_METRICS_EXPORTER": "otlp"})
    assert not listed.otlp and not listed.prometheus


def test_durations_are_milliseconds_and_headers_and_resource_come_through() -> None:
    settings = metric_export_settings(
        COLLECTOR
        | {
            "OTEL_METRIC_EXPORT_INTERVAL": "250",
            "OTEL_METRIC_EXPORT_TIMEOUT": "1500",
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "400",
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "api-key=s%3Dcret",
            "OTEL_SERVICE_NAME": "gw",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "http,gen_ai_latest_experimental",
        }
    )
    assert settings.interval_s == 0.25 and settings.timeout_s == 1.5
    assert settings.target is not None
    assert settings.target.timeout_s == 0.4
    assert settings.target.headers == {"api-key": "s=cret"}
    assert settings.target.service_name == "gw" and settings.latest_semconv
    assert "s=cret" not in repr(settings)


@pytest.mark.parametrize(
    ("preference", "delta"),
    [("cumulative", False), ("delta", True), ("LowMemory", True), ("", False)],
)
def test_temporality_preference(preference: str, delta: bool) -> None:
    env = COLLECTOR | {"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": preference}
    assert metric_export_settings(env).delta is delta


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"OTEL_METRICS_EXPORTER": "console"}, "console"),
        ({"OTEL_METRICS_EXPORTER": "none,otlp"}, "none cannot be listed"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "soon"}, "OTEL_METRIC_EXPORT_INTERVAL must be a number"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "0"}, "OTEL_METRIC_EXPORT_INTERVAL must be more than 0"),
        ({"OTEL_METRIC_EXPORT_TIMEOUT": "-5"}, "OTEL_METRIC_EXPORT_TIMEOUT must not be negative"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "nan"}, "OTEL_METRIC_EXPORT_INTERVAL must be a finite"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "inf"}, "OTEL_METRIC_EXPORT_INTERVAL must be a finite"),
        ({"OTEL_METRIC_EXPORT_TIMEOUT": "nan"}, "OTEL_METRIC_EXPORT_TIMEOUT must be a finite"),
        ({"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "0"}, "METRICS_TIMEOUT must be more than 0"),
        (
            {"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "sometimes"},
            "use cumulative, delta or lowmemory",
        ),
        ({"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"}, "http/protobuf"),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "collector:4318"}, "http:// or https://"),
    ],
)
def test_a_bad_value_is_refused_naming_what_to_set(env: dict[str, str], names: str) -> None:
    with pytest.raises(OtlpSettingsError, match=names):
        metric_export_settings(COLLECTOR | env)
