"""OpenTelemetry over OTLP/HTTP without the SDK: trace context, sampling, settings, transport."""
