"""A backend the test owns for uploads: it reads chunked bodies as they come and says when."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.http_thread import serve_in_thread, stop_serving


@dataclass(frozen=True)
class Upload:
    """One POST as the backend read it."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class UploadBackend:
    """Healthy on GET /health; answers each POST `status` with `answer` once it is read.

    `marker_seen` is set as soon as the bytes read so far of a POST contain `marker`. With
    `stalls`, a POST's body is never read: the handler waits until the backend stops.
    """

    marker: bytes = b""
    status: int = 200
    answer: bytes = b'{"text":"ok","usage":{"type":"duration","seconds":1}}'
    uploads: list[Upload] = field(default_factory=list)
    marker_seen: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    stalls: bool = False
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        """Its base URL."""
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def posts(self) -> list[Upload]:
        """The POSTs read so far."""
        with self.lock:
            return list(self.uploads)

    def _read_chunked(self, handler: BaseHTTPRequestHandler) -> bytes:
        body = b""
        while True:
            size = int(handler.rfile.readline().strip(), 16)
            data = handler.rfile.read(size + 2)[:size]
            body += data
            if self.marker and self.marker in body:
                self.marker_seen.set()
            if size == 0:
                return body

    def __enter__(self) -> UploadBackend:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(200 if self.path == "/health" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                if backend.stalls:
                    backend.stopping.wait()
                    return
                if self.headers.get("Transfer-Encoding") == "chunked":
                    try:
                        body = backend._read_chunked(self)
                    except ValueError:
                        return  # the gateway cut the upload: nothing was sent whole
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with backend.lock:
                    backend.uploads.append(Upload(self.path, dict(self.headers.items()), body))
                self.send_response(backend.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(backend.answer)))
                self.end_headers()
                self.wfile.write(backend.answer)

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
        self.stopping.set()
        stop_serving(self.server)
