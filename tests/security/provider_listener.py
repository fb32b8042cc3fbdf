"""A real HTTP server that answers like an OpenAI-compatible provider and records every contact."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.http_thread import serve_in_thread, stop_serving

COMPLETION = {
    "id": "chatcmpl-listener",
    "object": "chat.completion",
    "created": 1,
    "model": "listener",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hi"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


@dataclass(frozen=True)
class Contact:
    """One request as the listener saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ProviderListener:
    """Counts every TCP connection and records every request; answers a chat completion."""

    # Answer with a 400 whose message echoes the request's Authorization and Host headers.
    echo_errors: bool = False
    requests: list[Contact] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Base URL (with /v1) of the listener."""
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def seen(self) -> tuple[int, list[Contact]]:
        """Connections accepted and requests read so far."""
        with self.lock:
            return self.connections, list(self.requests)

    def _record(self, contact: Contact) -> None:
        with self.lock:
            self.requests.append(contact)

    def _connected(self) -> None:
        with self.lock:
            self.connections += 1

    def __enter__(self) -> ProviderListener:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                listener._record(Contact(self.command, self.path, headers, body))
                status, answer = 200, COMPLETION
                if listener.echo_errors:
                    echoed = f"refused {headers.get('authorization')} at {headers.get('host')}"
                    status, answer = 400, {"error": {"message": echoed, "type": "bad"}}
                out = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                listener._connected()
                return True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        serve_in_thread(self.server)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stop_serving(self.server)
