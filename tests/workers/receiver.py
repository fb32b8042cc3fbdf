"""A real HTTP server that records what notification channels are sent, failing on request."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.http_thread import serve_in_thread, stop_serving


@dataclass
class Received:
    """One POST: path, JSON body, the status we answered."""

    path: str
    body: Any
    status: int


@dataclass
class Receiver:
    """Records POSTs; the first `fail_first[path]` requests to a path get a 503, and every
    request to a path in `always` gets that status."""

    fail_first: dict[str, int] = field(default_factory=dict)
    always: dict[str, int] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Base URL of the server."""
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def on(self, path: str) -> list[Received]:
        """Everything posted to `path`."""
        with self.lock:
            return [r for r in self.received if r.path == path]

    def handle(self, path: str, body: Any) -> int:
        """Record a POST; the status to answer."""
        with self.lock:
            seen = sum(1 for r in self.received if r.path == path)
            status = 503 if seen < self.fail_first.get(path, 0) else self.always.get(path, 200)
            self.received.append(Received(path, body, status))
            return status

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                status = receiver.handle(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"ok": true}' if status == 200 else b'{"error": "down"}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serve_in_thread(self.server)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stop_serving(self.server)
