"""A real webhook endpoint on loopback that keeps every JSON body POSTed to it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from tests.support.http_thread import serve_in_thread, stop_serving


class WebhookReceiver:
    """Serves POST / in a thread; `bodies` are the notices received, in order."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self._lock = threading.Lock()
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with received._lock:
                    received.bodies.append(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def __enter__(self) -> WebhookReceiver:
        serve_in_thread(self.server)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_serving(self.server)

    def received(self) -> list[Any]:
        """A copy of the bodies so far."""
        with self._lock:
            return list(self.bodies)
