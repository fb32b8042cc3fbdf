"""Which metric exporters run, and how OTLP metrics are sent, from the standard OTEL_* variables.

`OTEL_METRICS_EXPORTER` unset: Prometheus' `/metrics` is served, and OTLP metrics are exported
only when an OTLP metrics endpoint is configured (the rule traces follow). Set: exactly the
exporters it lists (`otlp`, `prometheus`, or `none`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from plumbline.otlp.settings import (
    DEFAULT_SERVICE_NAME,
    OtlpSettingsError,
    OtlpTarget,
    duration_s,
    latest_gen_ai_semconv,
    otlp_target,
    sdk_disabled,
)

EXPORTERS = ("otlp", "prometheus", "none")
# The specification's endpoint when `otlp` is asked for and no endpoint is set.
DEFAULT_ENDPOINT = "http://localhost:4318/v1/metrics"
# The SDK specification's default limit of attribute sets per instrument.
CARDINALITY_LIMIT = 2000
TEMPORALITY = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
# Histograms are the only instruments here: delta under both `delta` and `lowmemory`.
DELTA_PREFERENCES = {"cumulative": False, "delta": True, "lowmemory": True}


@dataclass(frozen=True, slots=True)
class MetricExportSettings:
    """Prometheus on or off, and the OTLP metrics target (None: no OTLP export)."""

    prometheus: bool = True
    target: OtlpTarget | None = None
    interval_s: float = 60.0
    timeout_s: float = 30.0
    delta: bool = False
    latest_semconv: bool = False
    cardinality_limit: int = CARDINALITY_LIMIT

    @property
    def otlp(self) -> bool:
        """True when metrics are exported over OTLP."""
        return self.target is not None


def _exporters(env: Mapping[str, str]) -> set[str] | None:
    """The exporters `OTEL_METRICS_EXPORTER` lists; None when it is unset."""
    raw = env.get("OTEL_METRICS_EXPORTER", "").strip().lower()
    if not raw:
        return None
    names = {name.strip() for name in raw.split(",") if name.strip()}
    unknown = sorted(names - set(EXPORTERS))
    if unknown:
        raise OtlpSettingsError(
            f"OTEL_METRICS_EXPORTER lists {', '.join(unknown)}: Plumbline serves "
            "otlp, prometheus or none (a comma-separated list)"
        )
    if "none" in names and len(names) > 1:
        raise OtlpSettingsError("OTEL_METRICS_EXPORTER: none cannot be listed with other exporters")
    return names


def _delta(env: Mapping[str, str]) -> bool:
    preference = env.get(TEMPORALITY, "").strip().lower() or "cumulative"
    if preference not in DELTA_PREFERENCES:
        raise OtlpSettingsError(f"{TEMPORALITY}={preference!r}: use cumulative, delta or lowmemory")
    return DELTA_PREFERENCES[preference]


def _target(env: Mapping[str, str], asked: bool, default_service: str) -> OtlpTarget | None:
    """The OTLP target, or None; `asked`: `otlp` is listed rather than implied."""
    if sdk_disabled(env):
        return None
    target = otlp_target(env, "metrics", default_service)
    if target.endpoint is not None:
        return target
    if not asked:
        return None
    return OtlpTarget(
        endpoint=DEFAULT_ENDPOINT,
        headers=target.headers,
        timeout_s=target.timeout_s,
        service_name=target.service_name,
        resource_attributes=target.resource_attributes,
    )


def metric_export_settings(
    env: Mapping[str, str], default_service: str = DEFAULT_SERVICE_NAME
) -> MetricExportSettings:
    """The metric exporters the environment asks for; a bad value raises OtlpSettingsError."""
    exporters = _exporters(env)
    prometheus = exporters is None or "prometheus" in exporters
    wants_otlp = exporters is None or "otlp" in exporters
    target = _target(env, exporters is not None, default_service) if wants_otlp else None
    return MetricExportSettings(
        prometheus=prometheus,
        target=target,
        interval_s=duration_s(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000),
        timeout_s=duration_s(env, "OTEL_METRIC_EXPORT_TIMEOUT", 30_000),
        delta=_delta(env),
        latest_semconv=latest_gen_ai_semconv(env),
    )
