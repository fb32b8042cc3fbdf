"""OTLP export settings from the standard OTEL_* environment variables, read once at start-up."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

HTTP_PROTOBUF = "http/protobuf"
# One day: longer waits are a mistake, and threading's limit is far above it.
MAX_DURATION_S = 86_400.0
DEFAULT_SERVICE_NAME = "plumbline-gateway"


class OtlpSettingsError(ValueError):
    """An OTEL_* variable the gateway cannot honour; the message says what to set instead."""


def _key_values(text: str, name: str) -> dict[str, str]:
    """`k1=v1,k2=v2` (W3C baggage-like), keys and values url-decoded."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # The value may be a credential: name the variable, not its content.
            raise OtlpSettingsError(f"{name} must be a list of key=value pairs")
        pairs[unquote(key.strip())] = unquote(value.strip())
    return pairs


def _number(env: Mapping[str, str], name: str, default: float, *, scale: float = 1.0) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default * scale
    try:
        value = float(raw)
    except ValueError:
        raise OtlpSettingsError(f"{name} must be a number, got {raw!r}") from None
    # nan and inf would pass every comparison below and break the export threads later.
    if not math.isfinite(value):
        raise OtlpSettingsError(f"{name} must be a finite number, got {raw!r}")
    if value < 0:
        raise OtlpSettingsError(f"{name} must not be negative, got {raw!r}")
    return value * scale


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    value = int(_number(env, name, default))
    if value < 1:
        raise OtlpSettingsError(f"{name} must be at least 1")
    return value


def _endpoint(env: Mapping[str, str], signal: str) -> str | None:
    # The per-signal endpoint is used as is; the generic one gets the signal's path.
    own = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
    generic = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    endpoint = own or (generic.rstrip("/") + f"/v1/{signal}" if generic else "")
    if not endpoint:
        return None
    if not endpoint.startswith(("http://", "https://")):
        raise OtlpSettingsError(f"the OTLP {signal} endpoint must be an http:// or https:// URL")
    parts = urlsplit(endpoint)
    if parts.username is not None or parts.password is not None:
        # The URL is logged when an export fails: a credential in it would be too.
        raise OtlpSettingsError(
            f"the OTLP {signal} endpoint must not carry credentials; put them in "
            "OTEL_EXPORTER_OTLP_HEADERS (e.g. Authorization=Basic%20...) instead"
        )
    return endpoint


def _protocol(env: Mapping[str, str], signal: str) -> None:
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = env.get(name, "").strip()
        if not protocol:
            continue
        if protocol != HTTP_PROTOBUF:
            raise OtlpSettingsError(
                f"{name}={protocol!r} is not supported: Plumbline exports OTLP over HTTP "
                f"(set {name}={HTTP_PROTOBUF} and point the endpoint at the collector's "
                "OTLP/HTTP port, usually 4318)"
            )
        return


@dataclass(frozen=True, slots=True)
class OtlpTarget:
    """Where one signal goes over OTLP/HTTP; `endpoint` None means that signal is not exported."""

    endpoint: str | None = None
    # Collector credentials live here: never logged, never shown (see `__repr__`).
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    timeout_s: float = 10.0
    service_name: str = DEFAULT_SERVICE_NAME
    resource_attributes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TraceExportSettings:
    """Where spans go (`target`) and how they are batched; no endpoint means export is off."""

    target: OtlpTarget = field(default_factory=OtlpTarget)
    max_queue_size: int = 2048
    schedule_delay_s: float = 5.0
    max_export_batch_size: int = 512
    export_timeout_s: float = 30.0
    latest_semconv: bool = False

    @property
    def enabled(self) -> bool:
        """True when spans are to be exported."""
        return self.target.endpoint is not None


def otlp_target(
    env: Mapping[str, str], signal: str, default_service: str = DEFAULT_SERVICE_NAME
) -> OtlpTarget:
    """Endpoint, headers, timeout and resource of `signal` ("traces", "metrics")."""
    _protocol(env, signal)
    own_headers = f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS"
    headers = _key_values(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""), "OTEL_EXPORTER_OTLP_HEADERS")
    headers |= _key_values(env.get(own_headers, ""), own_headers)
    own_timeout = f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT"
    timeout_name = own_timeout if env.get(own_timeout, "").strip() else "OTEL_EXPORTER_OTLP_TIMEOUT"
    resource = _key_values(env.get("OTEL_RESOURCE_ATTRIBUTES", ""), "OTEL_RESOURCE_ATTRIBUTES")
    service = env.get("OTEL_SERVICE_NAME", "").strip() or resource.get(
        "service.name", default_service
    )
    # Durations are milliseconds in the specification.
    return OtlpTarget(
        endpoint=_endpoint(env, signal),
        headers=headers,
        timeout_s=duration_s(env, timeout_name, 10_000),
        service_name=service,
        resource_attributes=resource,
    )


def duration_s(env: Mapping[str, str], name: str, default_ms: float) -> float:
    """A duration variable, in milliseconds as the specification has it, as seconds."""
    value = _number(env, name, default_ms, scale=1e-3)
    # Zero would be no timeout to aiohttp and a busy loop to an export thread.
    if not 0 < value <= MAX_DURATION_S:
        raise OtlpSettingsError(
            f"{name} must be more than 0 and at most {MAX_DURATION_S * 1000:.0f} milliseconds"
        )
    return value


def latest_gen_ai_semconv(env: Mapping[str, str]) -> bool:
    """`OTEL_SEMCONV_STABILITY_OPT_IN` lists `gen_ai_latest_experimental`."""
    opt_in = {part.strip() for part in env.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")}
    return "gen_ai_latest_experimental" in opt_in


def sdk_disabled(env: Mapping[str, str]) -> bool:
    """`OTEL_SDK_DISABLED=true`: every signal off."""
    return env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def trace_export_settings(
    env: Mapping[str, str], default_service: str = DEFAULT_SERVICE_NAME
) -> TraceExportSettings:
    """The settings the environment asks for; export is off unless an endpoint is set."""
    if sdk_disabled(env):
        return TraceExportSettings()
    exporters = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if exporters == "none":
        return TraceExportSettings()
    if exporters != "otlp":
        raise OtlpSettingsError(f"OTEL_TRACES_EXPORTER={exporters!r}: only otlp or none")
    target = otlp_target(env, "traces", default_service)
    return TraceExportSettings(
        target=target,
        max_queue_size=_count(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048),
        schedule_delay_s=duration_s(env, "OTEL_BSP_SCHEDULE_DELAY", 5000),
        max_export_batch_size=_count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
        export_timeout_s=duration_s(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000),
        latest_semconv=latest_gen_ai_semconv(env),
    )
