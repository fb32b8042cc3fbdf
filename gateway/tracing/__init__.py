"""OpenTelemetry: spans of recorded calls, exported over OTLP/HTTP by the recorder process."""
