"""RunTracing: whether a process traces eval runs, the links its sample calls carry, the export."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from evals.run_trace.ids import question_span_id
from plumbline.otlp.attributes import process_resource
from plumbline.otlp.sampler import TraceSampler, sampler_from_env
from plumbline.otlp.settings import OtlpTarget, otlp_target
from plumbline.otlp.trace_context import format_traceparent
from plumbline.otlp.transport import TRIES, OtlpPoster

SCOPE = "plumbline.evals"
DEFAULT_SERVICE = "plumbline-worker"
# The header a sample call names its question span in (traceparent syntax); admin keys only.
TRACE_LINK_HEADER = "X-Plumbline-Trace-Link"


@dataclass(frozen=True, slots=True)
class RunTracing:
    """Where a process exports run traces and how it samples them (a run's trace is a root)."""

    target: OtlpTarget
    sampler: TraceSampler
    tries: int = TRIES
    # One per process that builds it (the gateway and each worker build it once).
    instance_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def sampled(self, trace_id: str) -> bool:
        """Whether the run's trace is sampled: decided from its trace id alone, so every
        worker (and any OTel SDK with the same sampler) decides alike."""
        return self.sampler.sampled(trace_id, None)

    def link(self, trace_id: str, question_key: str) -> str | None:
        """The X-Plumbline-Trace-Link of a sample call of this question; None if unsampled."""
        if not self.sampled(trace_id):
            return None
        return format_traceparent(trace_id, question_span_id(trace_id, question_key), True)

    def request(self, spans: list[Span]) -> bytes:
        """The serialized OTLP export request of `spans`."""
        target = self.target
        scope = ScopeSpans(scope=InstrumentationScope(name=SCOPE), spans=spans)
        described = process_resource(
            target.service_name, target.resource_attributes, self.instance_id
        )
        request = ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(resource=described, scope_spans=[scope])]
        )
        body: bytes = request.SerializeToString()
        return body

    def export(self, spans: list[Span]) -> bool:
        """POST the spans, bounded: `tries` requests of the target's timeout each, then give up.

        Never raises; failures are logged (rate-limited) by the poster.
        """
        assert self.target.endpoint is not None
        poster = OtlpPoster(self.target.endpoint, self.target.headers, self.target.timeout_s)
        try:
            return poster.post(self.request(spans), tries=self.tries, what=f"{len(spans)} spans")
        finally:
            poster.stop()


def run_tracing_from_env(
    env: Mapping[str, str], default_service: str = DEFAULT_SERVICE
) -> RunTracing | None:
    """The run tracing the OTEL_* variables ask for; None without a traces endpoint, or off.

    Raises OtlpSettingsError (naming the variable) on a value that cannot be honoured.
    """
    sampler = sampler_from_env(env)
    if sampler is None:
        return None
    target = otlp_target(env, "traces", default_service)
    if target.endpoint is None:
        return None
    return RunTracing(target, sampler)
