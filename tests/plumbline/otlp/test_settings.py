"""The standard OTEL_* variables, read as the OpenTelemetry specification defines them."""

from __future__ import annotations

import pytest

from plumbline.otlp.settings import OtlpSettingsError, trace_export_settings


def test_no_endpoint_means_no_export() -> None:
    settings = trace_export_settings({})
    assert not settings.enabled and settings.target.endpoint is None


def test_the_generic_endpoint_gets_the_traces_path_and_the_per_signal_one_is_used_as_is() -> None:
    generic = trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})
    assert generic.target.endpoint == "http://collector:4318/v1/traces"
    both = trace_export_settings(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://cloud.example/api/public/otel/v1/traces",
        }
    )
    assert both.target.endpoint == "https://cloud.example/api/public/otel/v1/traces"


@pytest.mark.parametrize(
    "env",
    [
        {"OTEL_SDK_DISABLED": "true"},
        {"OTEL_SDK_DISABLED": "TRUE"},
        {"OTEL_TRACES_EXPORTER": "none"},
    ],
)
def test_export_can_be_switched_off_with_an_endpoint_set(env: dict[str, str]) -> None:
    assert not trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"} | env).enabled


def test_headers_are_url_decoded_and_the_per_signal_ones_win() -> None:
    settings = trace_export_settings(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20cGs6c2s%3D, x-team = ops",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=traces",
        }
    )
    assert settings.target.headers == {"Authorization": "Basic cGs6c2s=", "x-team": "traces"}
    assert "cGs6c2s" not in repr(settings)


def test_a_malformed_header_list_names_the_variable_and_not_its_content() -> None:
    with pytest.raises(OtlpSettingsError, match="OTEL_EXPORTER_OTLP_HEADERS") as error:
        trace_export_settings(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "s3cret"}
        )
    assert "s3cret" not in str(error.value)


@pytest.mark.parametrize(
    "name", ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]
)
def test_grpc_is_refused_with_what_to_use_instead(name: str) -> None:
    with pytest.raises(OtlpSettingsError, match="http/protobuf") as error:
        trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", name: "grpc"})
    assert "4318" in str(error.value)


def test_http_protobuf_is_accepted() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    assert trace_export_settings(env).enabled


def test_durations_are_milliseconds_and_sizes_counts() -> None:
    settings = trace_export_settings(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
            "OTEL_BSP_MAX_QUEUE_SIZE": "10",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4",
            "OTEL_BSP_EXPORT_TIMEOUT": "1000",
        }
    )
    assert (settings.target.timeout_s, settings.schedule_delay_s, settings.export_timeout_s) == (
        2.5,
        0.2,
        1.0,
    )
    assert (settings.max_queue_size, settings.max_export_batch_size) == (10, 4)


def test_unset_durations_are_the_specifications_defaults_in_seconds() -> None:
    settings = trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert (settings.target.timeout_s, settings.schedule_delay_s, settings.export_timeout_s) == (
        10.0,
        5.0,
        30.0,
    )
    assert (settings.max_queue_size, settings.max_export_batch_size) == (2048, 512)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OTEL_BSP_MAX_QUEUE_SIZE", "0"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "lots"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "-1"),
        # Zero is no timeout to aiohttp and a busy loop to an export thread.
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "0"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "nan"),
        ("OTEL_BSP_SCHEDULE_DELAY", "0"),
        ("OTEL_BSP_SCHEDULE_DELAY", "inf"),
        ("OTEL_BSP_EXPORT_TIMEOUT", "NaN"),
        ("OTEL_BSP_EXPORT_TIMEOUT", "1e12"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "inf"),
    ],
)
def test_bad_numbers_stop_the_start_up(name: str, value: str) -> None:
    with pytest.raises(OtlpSettingsError, match=name):
        trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", name: value})


@pytest.mark.parametrize(
    "name", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
)
def test_credentials_in_the_endpoint_are_refused_without_showing_them(name: str) -> None:
    with pytest.raises(OtlpSettingsError, match="OTEL_EXPORTER_OTLP_HEADERS") as refused:
        trace_export_settings({name: "http://collector-user:s3cr3t@c:4318"})
    assert "s3cr3t" not in str(refused.value)


def test_an_endpoint_that_is_not_http_is_refused() -> None:
    with pytest.raises(OtlpSettingsError, match="http"):
        trace_export_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "unix:///tmp/otlp.sock"})


def test_service_name_and_resource_attributes() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=prod,service.name=from-resource",
    }
    assert trace_export_settings(env).target.service_name == "from-resource"
    named = trace_export_settings(env | {"OTEL_SERVICE_NAME": "gw-eu"})
    assert named.target.service_name == "gw-eu"
    assert named.target.resource_attributes["deployment.environment.name"] == "prod"
    assert trace_export_settings({}).target.service_name == "plumbline-gateway"


def test_the_semconv_opt_in_is_one_value_of_a_list() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert not trace_export_settings(base).latest_semconv
    opted = base | {"OTEL_SEMCONV_STABILITY_OPT_IN": "http, gen_ai_latest_experimental"}
    assert trace_export_settings(opted).latest_semconv
