"""A loopback OTLP/HTTP receiver the test owns: it decodes what exporters POST, as a collector does.

`/v1/traces` takes ExportTraceServiceRequest and `/v1/metrics` ExportMetricsServiceRequest, both
protobuf. `HungCollector` is a port that accepts connections and never answers.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.http_thread import serve_in_thread, stop_serving

MAX_BODY = 64 * 2**20


def plain_value(value: AnyValue) -> Any:
    """An OTLP attribute value as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    """OTLP key-values as a dict."""
    return {pair.key: plain_value(pair.value) for pair in pairs}


@dataclass(frozen=True)
class ReceivedSpan:
    """A span with its resource's attributes, its scope's schema URL and the request's headers."""

    span: Span
    resource: dict[str, Any]
    schema_url: str
    headers: dict[str, str]

    @property
    def attributes(self) -> dict[str, Any]:
        """The span's attributes as a dict."""
        return attributes(self.span.attributes)


@dataclass
class OtlpReceiver:
    """Decodes every export; answers `status` (200 by default)."""

    status: int = 200
    spans: list[ReceivedSpan] = field(default_factory=list)
    metrics: list[tuple[ExportMetricsServiceRequest, dict[str, str]]] = field(default_factory=list)
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The receiver's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT takes it)."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        serve_in_thread(self._server)
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        stop_serving(self._server)

    def span_of(self, call_id: str) -> ReceivedSpan | None:
        """The span whose `plumbline.call.id` is `call_id`, once received."""
        with self._lock:
            found = [s for s in self.spans if s.attributes.get("plumbline.call.id") == call_id]
        return found[0] if found else None

    def spans_in(self, trace_id: str) -> list[ReceivedSpan]:
        """The spans received so far of the trace `trace_id` (32 hex)."""
        with self._lock:
            return [s for s in self.spans if s.span.trace_id.hex() == trace_id]

    def _take(self, path: str, body: bytes, headers: dict[str, str]) -> bytes | None:
        with self._lock:
            if path == "/v1/traces":
                traces = ExportTraceServiceRequest.FromString(body)
                for resource_spans in traces.resource_spans:
                    resource = attributes(resource_spans.resource.attributes)
                    for scope in resource_spans.scope_spans:
                        self.spans.extend(
                            ReceivedSpan(span, resource, scope.schema_url, headers)
                            for span in scope.spans
                        )
                answer: bytes = ExportTraceServiceResponse().SerializeToString()
                return answer
            if path == "/v1/metrics":
                self.metrics.append((ExportMetricsServiceRequest.FromString(body), headers))
                answer = ExportMetricsServiceResponse().SerializeToString()
                return answer
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 <= length <= MAX_BODY or self.headers.get_content_type() != (
                    "application/x-protobuf"
                ):
                    self.send_error(400)
                    return
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver._lock:
                    receiver.requests += 1
                if receiver.status != 200:
                    self.send_error(receiver.status)
                    return
                answer = receiver._take(self.path, body, headers)
                if answer is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_: object) -> None:
                pass

        return Handler


class HungCollector:
    """A listening port that never accepts: connections complete and no answer ever comes."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(1024)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> HungCollector:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._socket.close()


def free_port_url() -> str:
    """A loopback URL where nothing listens (a collector that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"
