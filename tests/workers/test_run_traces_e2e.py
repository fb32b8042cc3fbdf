"""A run on a real worker is one trace a person can open: the run span and one span per
question (exported by the worker); each sample's call is its own trace (exported by the
gateway) linking to its question's span; the alert the run fired names the run's trace."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from evals.run_trace import question_span_id
from plumbline.child_process import plumbline_command
from plumbline.models import Alert, EvalRun, EvalSample
from tests.support.otlp_receiver import HungCollector, OtlpReceiver
from tests.workers.receiver import Receiver
from tests.workers.runs import run_on_workers
from tests.workers.stack import WorkerStack, wait_for, worker_stack
from tests.workers.suites import import_yaml, scenarios

pytestmark = pytest.mark.xdist_group("workers_run_traces")
# Four answers to the critical question: unless its 4 samples all agree, its interval's upper
# bound is under 0.99 and the alert fires (the samples are seeded: the same every time).
SPLIT_CAP = {f"The indemnity cap is {months} months of fees.": 1 for months in (6, 12, 18, 24)}
# 2 questions x 2 wordings x 2 samples: 8 calls, and a trace of 3 spans.
SUITE = """\
name: traced
team: legal
model: tiny
sampling: {temperature: 1.0, max_tokens: 48, seed_policy: per_sample, seed: 3}
paraphrases_per_question: 2
samples_per_paraphrase: 2
threshold: 0.9
alert:
  critical: {consecutive: 1, threshold: 0.99}
  notify: [hook]
questions:
  - id: cap
    text: What is the indemnity cap in months under clause 9.2?
    answer: {type: number, unit: months}
    critical: true
    paraphrases:
      - How many months of fees is the indemnity capped at under clause 9.2?
  - id: law
    text: Which law governs the agreement?
    answer:
      type: choice
      options: [english, new york]
    paraphrases:
      - What law governs this agreement?
"""


@pytest.fixture(scope="module")
def collector() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


@pytest.fixture(scope="module")
def stack(collector: OtlpReceiver, hook: Receiver) -> Iterator[WorkerStack]:
    """Gateway and worker both export to the collector (the worker under its default name)."""
    notify = {"channels": {"hook": {"kind": "webhook", "url": f"{hook.url}/hook"}}}
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "20"}
    with worker_stack(
        {"scenarios": scenarios(SPLIT_CAP)}, worker={"notify": notify}, env=env
    ) as running:
        running.worker(concurrency=2)
        yield running


def test_a_run_is_one_trace_its_calls_link_to_and_its_alert_names(
    stack: WorkerStack, collector: OtlpReceiver, hook: Receiver
) -> None:
    run_id = run_on_workers(stack, import_yaml(stack.sessions, SUITE))
    with stack.sessions() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None and run.trace_id is not None and run.span_id is not None
        samples = list(session.scalars(select(EvalSample).where(EvalSample.run_id == run_id)))
        alerts = list(session.scalars(select(Alert)))
    trace_id, keys = run.trace_id, {qid: key for key, qid in run.definition["question_ids"].items()}

    # The run's trace: its span and one child per question, however many samples it sent.
    wait_for(lambda: len(collector.spans_in(trace_id)) >= 3, 30, "the run's spans", stack)
    received = collector.spans_in(trace_id)
    assert len(received) == 3 and len(samples) == 8
    (root,) = [s for s in received if s.span.parent_span_id == b""]
    assert root.span.span_id.hex() == run.span_id
    assert root.resource["service.name"] == "plumbline-worker"
    assert root.attributes["plumbline.eval.run.id"] == run_id
    assert root.attributes["plumbline.eval.suite"] == "traced"
    assert root.attributes["plumbline.eval.agreement"] == run.summary["agreement"]
    assert root.attributes["plumbline.eval.samples"] == 8
    assert root.attributes["plumbline.eval.alert.decision"] == "fire"
    questions = {s.attributes["plumbline.eval.question.key"]: s for s in received if s is not root}
    assert set(questions) == {"cap", "law"}
    for key, span in questions.items():
        assert span.span.parent_span_id.hex() == run.span_id
        assert span.span.span_id.hex() == question_span_id(trace_id, key)
        assert span.attributes["plumbline.eval.samples"] == 4

    # Each sample's call: a trace of its own (the gateway's span) linking to its question.
    assert {s.status for s in samples} == {"done"}
    for sample in samples:
        assert sample.call_id is not None
        call = wait_for(
            lambda call_id=sample.call_id: collector.span_of(call_id), 30, "a call span", stack
        )
        assert call.span.trace_id.hex() != trace_id
        assert call.resource["service.name"] != "plumbline-worker"
        (link,) = call.span.links
        assert link.trace_id.hex() == trace_id
        assert link.span_id.hex() == questions[keys[sample.question_id]].span.span_id.hex()

    # The alert the run fired names the run's trace, in the API's row and the notification.
    (alert,) = alerts
    assert (alert.rule, alert.status, alert.trace_id) == ("question:cap", "firing", trace_id)
    (posted,) = wait_for(lambda: hook.on("/hook") or None, 30, "the webhook", stack)
    assert posted.body["trace_id"] == trace_id


def cli_run(stack: WorkerStack, suite: str, **env: str) -> EvalRun:
    """`plumbline eval run` (the in-process runner, as the API's and the demo's); its run."""
    done = subprocess.run(
        plumbline_command("eval", "run", suite),
        env={**stack.env, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with stack.sessions() as session:
        run = session.scalars(select(EvalRun).order_by(EvalRun.id.desc())).first()
        assert run is not None and run.trace_id is not None
        return run


def test_an_in_process_run_is_traced_the_same_way(
    stack: WorkerStack, collector: OtlpReceiver
) -> None:
    import_yaml(stack.sessions, SUITE.replace("name: traced", "name: traced-cli"))
    run = cli_run(stack, "traced-cli")
    assert run.trace_id is not None
    # Exported before the command returned: the spans are there.
    received = collector.spans_in(run.trace_id)
    assert len(received) == 3
    assert {s.resource["service.name"] for s in received} == {"plumbline-cli"}
    with stack.sessions() as session:
        calls = list(session.scalars(select(EvalSample.call_id).where(EvalSample.run_id == run.id)))
    call = wait_for(lambda: collector.span_of(str(calls[0])), 30, "a call span", stack)
    assert call.span.links[0].trace_id.hex() == run.trace_id


def test_a_hung_collector_costs_the_run_a_bounded_wait_not_its_result(
    stack: WorkerStack,
) -> None:
    import_yaml(stack.sessions, SUITE.replace("name: traced", "name: traced-hung"))
    with HungCollector() as hung:
        run = cli_run(
            stack,
            "traced-hung",
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{hung.url}/v1/traces",
            OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="200",
        )
    assert run.status == "completed" and run.summary is not None
