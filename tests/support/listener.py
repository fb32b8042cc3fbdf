"""A loopback HTTP listener the test owns: it records every request and answers as told."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.http_thread import serve_in_thread, stop_serving


@dataclass(frozen=True)
class Heard:
    """One request: method, path, headers and body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Listener:
    """Records every request; answers `status` with `body` (and `location`, for redirects)."""

    status: int = 200
    body: bytes = b'{"ok": true}'
    location: str | None = None
    heard: list[Heard] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        """The port it listens on (127.0.0.1)."""
        assert self.server is not None
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """Its base URL."""
        return f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[Heard]:
        """What arrived so far."""
        with self.lock:
            return list(self.heard)

    def __enter__(self) -> Listener:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with listener.lock:
                    listener.heard.append(
                        Heard(self.command, self.path, dict(self.headers.items()), body)
                    )
                self.send_response(listener.status)
                if listener.location:
                    self.send_header("Location", listener.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(listener.body)))
                self.end_headers()
                self.wfile.write(listener.body)

            do_GET = do_POST = _answer

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
