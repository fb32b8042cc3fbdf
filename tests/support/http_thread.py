"""A test's own HTTP server on loopback, served from a daemon thread."""

from __future__ import annotations

import threading
from http.server import HTTPServer


def serve_in_thread(server: HTTPServer) -> None:
    """Serve `server` until `stop_serving` is called."""
    threading.Thread(target=server.serve_forever, daemon=True).start()


def stop_serving(server: HTTPServer | None) -> None:
    """Stop a server started with `serve_in_thread` and release its port."""
    assert server is not None
    server.shutdown()
    server.server_close()
