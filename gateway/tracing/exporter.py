"""SpanExporter: a bounded queue of recorded calls whose spans are POSTed in OTLP/HTTP batches.

It runs in the recorder process. `offer` is called by the sink's journal thread with each
record and its row: it only appends to a bounded deque (a full queue drops the span, counted),
so a collector that is down or hangs never holds up the rows. The export thread builds the
spans and sends them; a batch gets a bounded number of tries, then is dropped and counted.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from dataclasses import replace
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from gateway.metering.record import CallRecord
from gateway.recording.stored_text import RedactionPolicy
from gateway.tracing.spans import SCHEMA_URL, SEMCONV_DEFAULT, SEMCONV_LATEST, call_span
from plumbline.blocking_http import BlockingHttp
from plumbline.otlp.attributes import process_resource
from plumbline.otlp.settings import TraceExportSettings
from plumbline.otlp.transport import TRIES, OtlpPoster

log = logging.getLogger(__name__)
SCOPE = "plumbline.gateway"
# The final pass at shutdown gets at most this long (or the export timeout, if shorter): a hung
# collector must not keep the recorder, and so the gateway's shutdown, waiting long.
SHUTDOWN_S = 5.0
DROP_REASONS = ("queue_full", "export_failed", "unbuildable")


class SpanExporter:
    """Takes sampled calls from the journal thread; exports their spans from its own thread."""

    def __init__(
        self,
        settings: TraceExportSettings,
        http: BlockingHttp | None = None,
        policy: RedactionPolicy | None = None,
        instance_id: str | None = None,
    ) -> None:
        self.settings = settings
        # The writer's redaction: bodies in spans are the bodies as stored, or none.
        self._policy = policy
        target = settings.target
        self._poster = OtlpPoster(str(target.endpoint), target.headers, target.timeout_s, http=http)
        self._queue: deque[tuple[CallRecord, dict[str, Any]]] = deque()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.exported = 0
        self.dropped = dict.fromkeys(DROP_REASONS, 0)
        version = SEMCONV_LATEST if settings.latest_semconv else SEMCONV_DEFAULT
        self._schema_url = SCHEMA_URL.format(version)
        self._resource = process_resource(
            target.service_name, target.resource_attributes, instance_id or str(uuid.uuid4())
        )

    def counts(self) -> dict[str, int]:
        """Counters for the recorder's report: exported and dropped by reason."""
        counts = {"trace_exported": self.exported}
        counts |= {f"trace_dropped_{reason}": n for reason, n in self.dropped.items()}
        return counts

    def start(self) -> None:
        """Start the export thread."""
        self._thread = threading.Thread(target=self._run, name="plumbline-span-export", daemon=True)
        self._thread.start()

    def offer(self, record: CallRecord, row: dict[str, Any]) -> None:
        """Queue a recorded call's span if its trace is sampled; never blocks."""
        if not record.trace_sampled or record.trace_id is None:
            return
        if len(self._queue) >= self.settings.max_queue_size:
            self.dropped["queue_full"] += 1
            return
        self._queue.append((self._slim(record), row))
        if len(self._queue) >= self.settings.max_export_batch_size:
            self._wake.set()

    def _slim(self, record: CallRecord) -> CallRecord:
        """The record without what its span does not need, so the queue's bound holds memory."""
        keep = record.store_body and self._policy is not None
        limit = self._policy.max_body_bytes if self._policy is not None else 0
        return replace(
            record,
            logprob_chunks=[],
            token_chunk_times=[],
            request_body=record.request_body[:limit] if keep and record.request_body else None,
            response_body=record.response_body[:limit] if keep and record.response_body else None,
        )

    def _bodies(self, record: CallRecord) -> tuple[str | None, str | None]:
        if self._policy is None or not record.store_body:
            return None, None
        request = self._policy.request(record.request_body) if record.request_body else None
        response = record.response_body
        answer = self._policy.response(response, record.stream) if response else None
        return request, answer

    def _redact(self, text: str) -> str:
        redactor = self._policy.redactor if self._policy is not None else None
        return redactor.text(text) if redactor is not None else text

    def stop(self) -> None:
        """Export what is queued (one try per batch, within the export timeout), then stop."""
        self._stopping = True
        self._poster.stopped.set()
        self._wake.set()
        if self._thread is not None:
            # The request in flight (connect and read timeouts), then the final pass.
            self._thread.join(self._final_pass_s() + 2 * self.settings.target.timeout_s + 1)
        self._poster.stop()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.settings.schedule_delay_s)
            self._wake.clear()
            stopping = self._stopping
            try:
                self._export_pass(stopping)
            except Exception:
                # The thread must outlive any one pass: a dead exporter would drop every span.
                log.exception("a span export pass failed; the next one goes on")
            if stopping:
                self.dropped["export_failed"] += len(self._queue)
                self._queue.clear()
                return

    def _export_pass(self, stopping: bool) -> None:
        budget = self._final_pass_s() if stopping else self.settings.export_timeout_s
        deadline = time.monotonic() + budget
        while self._queue and time.monotonic() < deadline:
            self._export(self._take(), tries=1 if stopping else TRIES)
            if not stopping and len(self._queue) < self.settings.max_export_batch_size:
                break

    def _final_pass_s(self) -> float:
        return min(self.settings.export_timeout_s, SHUTDOWN_S)

    def _take(self) -> list[Span]:
        spans: list[Span] = []
        while self._queue and len(spans) < self.settings.max_export_batch_size:
            record, row = self._queue.popleft()
            try:
                latest = self.settings.latest_semconv
                bodies = self._bodies(record)
                span = call_span(record, row, latest=latest, bodies=bodies, redact=self._redact)
                spans.append(span)
            except Exception:
                self.dropped["unbuildable"] += 1
                log.exception("the span of call %s could not be built", record.id)
        return spans

    def _request(self, spans: list[Span]) -> bytes:
        scope = ScopeSpans(
            scope=InstrumentationScope(name=SCOPE), spans=spans, schema_url=self._schema_url
        )
        request = ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(resource=self._resource, scope_spans=[scope])]
        )
        body: bytes = request.SerializeToString()
        return body

    def _export(self, spans: list[Span], tries: int) -> None:
        if not spans:
            return
        if self._poster.post(self._request(spans), tries=tries, what=f"{len(spans)} spans"):
            self.exported += len(spans)
        else:
            self.dropped["export_failed"] += len(spans)
