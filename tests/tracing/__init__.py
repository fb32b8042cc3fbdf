"""Tracing: spans exported over OTLP to a real backend (Arize Phoenix) and read back from it."""
