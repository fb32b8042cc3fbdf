"""MetricExporter: GenAI histograms aggregated from recorded calls, exported on its own thread.

It runs in the recorder process. `offer` is called by the sink's journal thread with each record
and its row and only updates fixed-size histograms (bounded attribute sets), so a collector that
is down or hangs never holds up the rows nor grows memory. Every export interval the export
thread collects the histograms and POSTs them (OTLP/HTTP protobuf) with bounded tries.
"""

from __future__ import annotations

import logging
import math
import threading
import uuid
from typing import Any

from gateway.metering.record import CallRecord
from gateway.otlp_metrics.aggregation import MetricAggregator
from gateway.otlp_metrics.instruments import INSTRUMENTS
from gateway.otlp_metrics.measurements import call_measurements
from gateway.otlp_metrics.otlp_request import metrics_request
from gateway.otlp_metrics.settings import MetricExportSettings
from gateway.tracing.exporter import SHUTDOWN_S
from gateway.tracing.spans import SCHEMA_URL, SEMCONV_DEFAULT, SEMCONV_LATEST
from plumbline.blocking_http import BlockingHttp
from plumbline.otlp.attributes import process_resource
from plumbline.otlp.transport import TRIES, OtlpPoster

log = logging.getLogger(__name__)


class MetricExporter:
    """Aggregates calls from the journal thread; exports every interval from its own thread."""

    def __init__(
        self,
        settings: MetricExportSettings,
        http: BlockingHttp | None = None,
        instance_id: str | None = None,
    ) -> None:
        target = settings.target
        if target is None or target.endpoint is None:
            raise ValueError("metric export needs an OTLP target")
        self.settings = settings
        # One request may take the OTLP timeout, and all tries together the export timeout.
        request_s = min(target.timeout_s, settings.timeout_s)
        self._tries = max(1, min(TRIES, math.floor(settings.timeout_s / request_s)))
        self._poster = OtlpPoster(target.endpoint, target.headers, request_s, http=http)
        self.aggregator = MetricAggregator(
            INSTRUMENTS, settings.cardinality_limit, delta=settings.delta
        )
        version = SEMCONV_LATEST if settings.latest_semconv else SEMCONV_DEFAULT
        self._schema_url = SCHEMA_URL.format(version)
        self._resource = process_resource(
            target.service_name, target.resource_attributes, instance_id or str(uuid.uuid4())
        )
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.exported = 0
        self.failed = 0

    def counts(self) -> dict[str, int]:
        """Counters for the recorder's report."""
        return {
            "metric_exported": self.exported,
            "metric_export_failed": self.failed,
            "metric_overflowed": self.aggregator.overflowed,
        }

    def offer(self, record: CallRecord, row: dict[str, Any]) -> None:
        """Add a recorded call to the histograms; never blocks on the collector, never raises."""
        try:
            for instrument, attributes, value in call_measurements(
                record, row, latest=self.settings.latest_semconv
            ):
                self.aggregator.record(instrument, attributes, value)
        except Exception:
            # A row the measurements cannot read must not fail the journal thread.
            log.exception("the metrics of call %s could not be measured", record.id)

    def start(self) -> None:
        """Start the export thread."""
        self._thread = threading.Thread(
            target=self._run, name="plumbline-metric-export", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Export once more (one try, bounded), then stop."""
        in_flight_s = 2 * self._poster.timeout_s
        final_s = min(self.settings.timeout_s, SHUTDOWN_S)
        # A hung collector must not hold the recorder, and so the gateway's shutdown, long.
        self._poster.timeout_s = min(self._poster.timeout_s, final_s)
        self._stopping = True
        self._poster.stopped.set()
        self._wake.set()
        if self._thread is not None:
            # The request in flight (connect and read timeouts), then the final one.
            self._thread.join(in_flight_s + 2 * self._poster.timeout_s + 1)
        self._poster.stop()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.settings.interval_s)
            stopping = self._stopping
            try:
                self.export(tries=1 if stopping else self._tries)
            except Exception:
                # The thread must outlive any one export: a dead exporter sends nothing again.
                self.failed += 1
                log.exception("a metric export failed; the next one goes on")
            if stopping:
                return

    def export(self, tries: int = 1) -> bool | None:
        """Collect and send the histograms; None when there was nothing to send."""
        collection = self.aggregator.collect()
        if not len(collection):
            return None
        body = metrics_request(
            collection, self._resource, self._schema_url, delta=self.settings.delta
        )
        accepted = self._poster.post(body, tries=tries, what=f"{len(collection)} metric points")
        if accepted:
            self.exported += 1
        else:
            self.failed += 1
        return accepted
