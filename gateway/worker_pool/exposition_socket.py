"""Each worker's own exposition on a unix socket in the pool's run directory, for its siblings."""

from __future__ import annotations

import contextlib
import logging
import socket
import socketserver
import threading
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

log = logging.getLogger(__name__)
# A sibling's exposition is a few hundred KiB at most; more is not a metrics page.
MAX_EXPOSITION_BYTES = 32 * 2**20


class ExpositionServer:
    """Answers every connection on `path` with this worker's exposition, then closes it."""

    def __init__(self, path: Path, registry: CollectorRegistry) -> None:
        self.path = path
        self._registry = registry
        self._server: socketserver.ThreadingUnixStreamServer | None = None

    def start(self) -> None:
        """Listen (replacing a dead predecessor's socket file) in a thread of its own."""
        registry = self._registry

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    self.request.sendall(generate_latest(registry))
                except OSError:
                    pass  # the asking sibling gave up (its gather timed out)

        self.path.unlink(missing_ok=True)
        server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        server.daemon_threads = True
        self.path.chmod(0o600)
        self._server = server
        threading.Thread(
            target=server.serve_forever, name="plumbline-worker-exposition", daemon=True
        ).start()

    def stop(self) -> None:
        """Stop listening and remove the socket file."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.path.unlink(missing_ok=True)


def fetch_exposition(path: Path, timeout_s: float) -> str | None:
    """A sibling's exposition, or None if it does not answer in full within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        with contextlib.closing(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)) as sock:
            sock.settimeout(timeout_s)
            sock.connect(str(path))
            while True:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_EXPOSITION_BYTES:
                    log.error("worker exposition at %s is over %d bytes", path, size)
                    return None
                chunks.append(chunk)
    except OSError:
        return None
    return b"".join(chunks).decode("utf-8", errors="replace")
