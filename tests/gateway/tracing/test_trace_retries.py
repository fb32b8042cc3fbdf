"""A call sent to a second backend after a 503 carries the same gateway span upstream."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.gateway.tracing.replies import BODY, CHAT_REPLY, TRACE
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.http_thread import serve_in_thread, stop_serving
from tests.support.otlp_receiver import free_port_url

pytestmark = pytest.mark.xdist_group("gateway-trace-retries")


class Backend:
    """Healthy to the gateway's probes; answers every POST `status`; keeps their traceparents."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.traceparents: dict[str, str] = {}
        self.lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply(200, b"{}")

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with backend.lock:
                    request_id = self.headers.get("X-Request-Id", "")
                    backend.traceparents[request_id] = self.headers.get("traceparent", "")
                self._reply(backend.status, CHAT_REPLY if backend.status == 200 else b"{}")

            def _reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def seen(self, request_id: str) -> str | None:
        """The traceparent the call with `request_id` brought, if it came here."""
        with self.lock:
            return self.traceparents.get(request_id)


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[GatewayProcess, Backend, Backend, CallReader, str]]:
    with ExitStack() as exits:
        failing, serving = Backend(503), Backend(200)
        for backend in (failing, serving):
            serve_in_thread(backend.server)
            exits.callback(stop_serving, backend.server)
        url = exits.enter_context(postgres_database("plumbline_trace_retries"))
        key = issue_key(url, "alpha")
        config = gateway_config(failing.url)
        config["models"][0]["backends"] = [{"url": failing.url}, {"url": serving.url}]
        gateway = GatewayProcess(config, url, env={"OTEL_EXPORTER_OTLP_ENDPOINT": free_port_url()})
        exits.enter_context(gateway)
        calls = CallReader(url)
        exits.callback(calls.close)
        yield gateway, failing, serving, calls, key


def test_every_attempt_carries_the_same_traceparent(
    setup: tuple[GatewayProcess, Backend, Backend, CallReader, str],
) -> None:
    gateway, failing, serving, calls, key = setup
    retried = 0
    # Which backend goes first is the picker's choice: a few calls make one go to both.
    for _ in range(6):
        response = httpx.post(
            f"{gateway.url}/v1/chat/completions",
            json=BODY,
            headers={
                "Authorization": f"Bearer {key}",
                "traceparent": f"00-{TRACE}-00f067aa0ba902b7-01",
            },
            timeout=30,
        )
        assert response.status_code == 200, response.text
        row = calls.wait(response.headers["x-plumbline-call-id"])
        sent = f"00-{TRACE}-{row.span_id}-01"
        assert serving.seen(row.request_id) == sent
        first = failing.seen(row.request_id)
        if first is not None:
            assert first == sent
            retried += 1
    assert retried > 0
