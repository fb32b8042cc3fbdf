"""Tracing: W3C trace context in and out, sampling, and (in the recorder) the calls' spans."""
