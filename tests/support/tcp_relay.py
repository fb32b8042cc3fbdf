"""A loopback TCP relay to a server, counting the HTTP request lines clients sent through it.

Give each process its own relay to the same gateway and the relays tell which process made the
calls: a call counted on one relay cannot have come from a process pointed at another.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

CHUNK = 65536


class TcpRelay:
    """Accepts on 127.0.0.1, pipes each connection to `upstream_port`, counts `marker`s sent."""

    def __init__(self, upstream_port: int, marker: bytes = b"POST /v1/chat/completions ") -> None:
        self.upstream_port = upstream_port
        self.marker = marker
        self.connections = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._open: list[socket.socket] = []
        self._closed = threading.Event()

    @property
    def port(self) -> int:
        """Where clients connect."""
        return int(self._server.getsockname()[1])

    @property
    def url(self) -> str:
        """The relay as an HTTP base URL."""
        return f"http://127.0.0.1:{self.port}"

    def counts(self) -> tuple[int, int]:
        """(connections accepted, marked requests seen) so far."""
        with self._lock:
            return self.connections, self.requests

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:  # the server is gone (stopping): the client sees the close
                client.close()
                continue
            with self._lock:
                self.connections += 1
                self._open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket, count: bool) -> None:
        tail = b""
        try:
            while data := source.recv(CHUNK):
                if count:
                    # The tail (one byte short of a marker) finds a marker split across reads.
                    seen = tail + data
                    with self._lock:
                        self.requests += seen.count(self.marker)
                    tail = seen[-(len(self.marker) - 1) :]
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def __enter__(self) -> TcpRelay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed.set()
        self._server.close()
        with self._lock:
            for end in self._open:
                end.close()
