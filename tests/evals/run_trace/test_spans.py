"""A run's spans: ids, parent and child, attributes, the link its sample calls carry."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evals.run_trace import QuestionFacts, RunFacts, RunTracing, question_span_id, run_spans
from evals.run_trace.export import run_tracing_from_env
from evals.run_trace.spans import AlertFacts
from plumbline.otlp.sampler import TraceSampler
from plumbline.otlp.settings import OtlpSettingsError, OtlpTarget
from plumbline.otlp.trace_context import parse_traceparent
from tests.support.otlp_receiver import attributes

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
RUN_SPAN = "00f067aa0ba902b7"
STARTED = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def facts(**changes: object) -> RunFacts:
    values: dict[str, object] = {
        "run_id": 7,
        "trace_id": TRACE,
        "span_id": RUN_SPAN,
        "suite": "contracts",
        "team": "legal",
        "model": "tiny",
        "status": "completed",
        "started_at": STARTED,
        "finished_at": STARTED + timedelta(seconds=42),
        "samples": {"done": 7, "failed": 1},
        "agreement": 0.75,
        "lower": 0.5,
        "upper": 0.9,
        "threshold": 0.9,
        "alert_outcome": "evaluated",
        "alerts": (
            AlertFacts("suite", "nothing", "ok"),
            AlertFacts("question:cap", "fire", "firing"),
        ),
        "questions": (
            QuestionFacts(
                "cap",
                0.5,
                0.2,
                0.8,
                4,
                critical=True,
                divergence_position=5,
                divergence_margin=0.04,
                divergence_verdict="explained",
                divergence_near_tie=True,
                divergence_tokens=("12", "24"),
                divergence_probabilities=(0.52, 0.48),
            ),
            QuestionFacts("law", 1.0, 0.6, 1.0, 4),
        ),
    }
    return RunFacts(**(values | changes))  # type: ignore[arg-type]


def test_a_run_is_one_root_span_and_a_child_per_question() -> None:
    run, cap, law = run_spans(facts())
    assert {s.trace_id.hex() for s in (run, cap, law)} == {TRACE}
    assert run.span_id.hex() == RUN_SPAN and run.parent_span_id == b""
    assert cap.parent_span_id.hex() == law.parent_span_id.hex() == RUN_SPAN
    assert cap.span_id.hex() == question_span_id(TRACE, "cap")
    assert law.span_id.hex() == question_span_id(TRACE, "law") != cap.span_id.hex()
    assert (run.name, cap.name) == ("eval.run contracts", "eval.question cap")
    assert run.start_time_unix_nano == int(STARTED.timestamp() * 1e9)
    assert run.end_time_unix_nano - run.start_time_unix_nano == 42 * 10**9


def test_the_run_span_holds_the_runs_figures_and_alert_decision() -> None:
    run = run_spans(facts())[0]
    held = attributes(run.attributes)
    assert held["plumbline.eval.run.id"] == 7 and held["plumbline.eval.suite"] == "contracts"
    assert held["plumbline.team"] == "legal" and held["plumbline.eval.run.status"] == "completed"
    assert held["plumbline.eval.agreement"] == 0.75
    assert (held["plumbline.eval.interval.lower"], held["plumbline.eval.interval.upper"]) == (
        0.5,
        0.9,
    )
    assert held["plumbline.eval.threshold"] == 0.9
    assert held["plumbline.eval.alert.decision"] == "fire"
    assert held["plumbline.eval.alert.rules"] == ["suite:nothing", "question:cap:fire"]
    assert (held["plumbline.eval.samples"], held["plumbline.eval.errors"]) == (8, 1)
    assert held["plumbline.eval.questions"] == 2
    (event,) = run.events
    assert attributes(event.attributes)["plumbline.eval.alert.rule"] == "question:cap"


def test_no_attribute_key_is_a_prefix_of_another_so_phoenix_keeps_them_all() -> None:
    for span in run_spans(facts()):
        keys = [pair.key for pair in span.attributes]
        assert not [(a, b) for a in keys for b in keys if b.startswith(a + ".")]


def test_a_question_span_holds_its_agreement_and_first_divergence() -> None:
    cap, law = (attributes(s.attributes) for s in run_spans(facts())[1:])
    assert cap["plumbline.eval.question.key"] == "cap" and cap["plumbline.eval.question.critical"]
    assert (cap["plumbline.eval.agreement"], cap["plumbline.eval.samples"]) == (0.5, 4)
    assert cap["plumbline.eval.interval.lower"] == 0.2
    assert cap["plumbline.eval.divergence.position"] == 5
    assert cap["plumbline.eval.divergence.tokens"] == ["12", "24"]
    assert cap["plumbline.eval.divergence.probabilities"] == [0.52, 0.48]
    assert cap["plumbline.eval.divergence.verdict"] == "explained"
    assert cap["plumbline.eval.divergence.near_tie"] is True
    # A question without a divergence has none of its attributes (None values are left out).
    assert not [k for k in law if k.startswith("plumbline.eval.divergence")]


def test_unknown_probabilities_are_left_out_rather_than_a_mixed_array() -> None:
    question = QuestionFacts(
        "cap", 0.5, 0.2, 0.8, 4, divergence_tokens=("a", "b"), divergence_probabilities=(0.5, None)
    )
    held = attributes(run_spans(facts(questions=(question,)))[1].attributes)
    assert held["plumbline.eval.divergence.tokens"] == ["a", "b"]
    assert "plumbline.eval.divergence.probabilities" not in held


@pytest.mark.parametrize(
    ("outcome", "alerts", "decision"),
    [
        ("evaluated", (), "none"),
        ("evaluated", (AlertFacts("suite", "resolve", "ok"),), "resolve"),
        ("unscored", (), "unscored"),
        ("stale", (), "stale"),
        (None, (), "none"),
    ],
)
def test_the_alert_decision_says_what_the_run_did(
    outcome: str | None, alerts: tuple[AlertFacts, ...], decision: str
) -> None:
    assert facts(alert_outcome=outcome, alerts=alerts).alert_decision == decision


def test_a_failed_run_is_an_error_span() -> None:
    run = run_spans(facts(status="failed", questions=()))[0]
    assert run.status.code == run.status.STATUS_CODE_ERROR


def test_question_span_ids_are_derived_the_same_everywhere_and_never_zero() -> None:
    assert question_span_id(TRACE, "cap") == question_span_id(TRACE, "cap")
    assert question_span_id(TRACE, "cap") != question_span_id("1" * 32, "cap")
    expected = hashlib.sha256(f"{TRACE}:cap".encode()).hexdigest()[:16]
    assert question_span_id(TRACE, "cap") == expected
    assert len(expected) == 16 and expected != "0" * 16


def tracing(sampler: TraceSampler) -> RunTracing:
    return RunTracing(OtlpTarget(endpoint="http://127.0.0.1:9/v1/traces"), sampler)


def test_a_sample_calls_link_is_a_valid_traceparent_naming_its_question_span() -> None:
    link = tracing(TraceSampler("always_on")).link(TRACE, "cap")
    assert link == f"00-{TRACE}-{question_span_id(TRACE, 'cap')}-01"
    parsed = parse_traceparent(link)
    assert parsed is not None and parsed.sampled
    assert (parsed.trace_id, parsed.span_id) == (TRACE, question_span_id(TRACE, "cap"))


def test_an_unsampled_run_sends_no_link() -> None:
    assert tracing(TraceSampler("always_off")).link(TRACE, "cap") is None
    # traceidratio decides from the trace id's last 56 bits: every worker alike.
    ratio = tracing(TraceSampler("traceidratio", 0.5))
    low, high = "0" * 18 + "1" * 14, "0" * 16 + "f" * 16
    assert ratio.link(low, "cap") is None and ratio.link(high, "cap") is not None


def test_the_export_request_names_the_workers_service_and_its_instance() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    env["OTEL_RESOURCE_ATTRIBUTES"] = "a=b"
    found = run_tracing_from_env(env)
    assert found is not None and found.target.endpoint == "http://collector:4318/v1/traces"
    request = ExportTraceServiceRequest.FromString(found.request(run_spans(facts())))
    (resource,) = request.resource_spans
    resource_attributes = attributes(resource.resource.attributes)
    instance = {"service.instance.id": found.instance_id}
    assert resource_attributes == {"a": "b", "service.name": "plumbline-worker"} | instance
    # Each process that traces runs is its own instance, as the gateway's exporters are.
    assert run_tracing_from_env(env).instance_id != found.instance_id  # type: ignore[union-attr]
    assert len(resource.scope_spans[0].spans) == 3
    assert resource.scope_spans[0].scope.name == "plumbline.evals"


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"},
    ],
)
def test_without_an_endpoint_or_with_tracing_off_runs_are_not_traced(env: dict[str, str]) -> None:
    assert run_tracing_from_env(env) is None


def test_a_bad_otel_value_names_the_variable() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    with pytest.raises(OtlpSettingsError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        run_tracing_from_env(env)
