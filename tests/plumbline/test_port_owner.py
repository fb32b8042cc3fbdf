"""A server's readiness is its own: a port another process listens on does not pass for it."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from plumbline.child_process import ServerProcess, free_port
from plumbline.port_owner import group_listens_on

SERVE = (
    "import http.server as h, sys; "
    "h.HTTPServer(('127.0.0.1', int(sys.argv[1])), h.SimpleHTTPRequestHandler).serve_forever()"
)


def test_a_process_group_is_found_listening_on_its_port_and_only_there() -> None:
    port = free_port()
    with ServerProcess(
        [sys.executable, "-c", SERVE, str(port)], health_url=f"http://127.0.0.1:{port}/"
    ) as server:
        assert server.process is not None
        assert group_listens_on(server.process.pid, port) is True
        assert group_listens_on(server.process.pid, free_port()) is False
        assert group_listens_on(os.getpgrp(), port) is False


def test_a_server_whose_port_another_process_holds_is_not_taken_for_ready() -> None:
    port = free_port()
    with ServerProcess(
        [sys.executable, "-c", SERVE, str(port)], health_url=f"http://127.0.0.1:{port}/"
    ):
        # A second server on the same port cannot bind; the first one's answers are not its.
        late = ServerProcess(
            [sys.executable, "-c", SERVE, str(port)],
            health_url=f"http://127.0.0.1:{port}/",
            startup_timeout=20,
        )
        with pytest.raises(RuntimeError, match="exited at start-up"):
            late.start()
        late.stop()


def test_a_socket_this_process_listens_on_is_found_in_its_group() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert group_listens_on(os.getpgrp(), sock.getsockname()[1]) is True
