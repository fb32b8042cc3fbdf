"""A local webhook receiver for the demo: the alert channel's far end, keeping what it gets."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class WebhookInbox:
    """An HTTP server on loopback that stores every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Where channels should POST."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/alerts"

    def messages(self) -> list[dict[str, Any]]:
        """What arrived so far."""
        with self._lock:
            return list(self.received)

    def __enter__(self) -> WebhookInbox:
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {"unparsed": True}
                with inbox._lock:
                    inbox.received.append(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
