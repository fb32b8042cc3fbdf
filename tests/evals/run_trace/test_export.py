"""Exporting a run's spans: accepted by a collector; a dead, hung or refusing one costs a bound."""

from __future__ import annotations

import pytest

from evals.run_trace import RunTracing, run_spans, run_tracing_from_env
from tests.evals.run_trace.test_spans import TRACE, facts
from tests.support.otlp_receiver import HungCollector, OtlpReceiver, free_port_url


def tracing_to(base: str, timeout_ms: int = 10_000) -> RunTracing:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TIMEOUT": str(timeout_ms)}
    found = run_tracing_from_env(env)
    assert found is not None
    return found


def test_a_collector_gets_the_runs_spans_in_one_request() -> None:
    with OtlpReceiver() as receiver:
        assert tracing_to(receiver.url).export(run_spans(facts()))
        assert receiver.requests == 1
        assert {s.span.trace_id.hex() for s in receiver.spans} == {TRACE}
        assert len(receiver.spans) == 3
        assert {s.resource["service.name"] for s in receiver.spans} == {"plumbline-worker"}


def test_a_down_collector_fails_the_export_without_raising() -> None:
    assert tracing_to(free_port_url()).export(run_spans(facts())) is False


def test_a_hung_collector_is_given_up_on_after_the_bounded_tries() -> None:
    with HungCollector() as hung:
        assert tracing_to(hung.url, timeout_ms=200).export(run_spans(facts())) is False


@pytest.mark.parametrize(("status", "tries"), [(503, 3), (400, 1)])
def test_a_refusing_collector_is_retried_only_when_retryable(status: int, tries: int) -> None:
    with OtlpReceiver(status=status) as receiver:
        assert tracing_to(receiver.url).export(run_spans(facts())) is False
        assert receiver.requests == tries
