"""OriginConnections: keep-alive connections to one backend, and the requests sent over them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from gateway.config import BackendLimits
from gateway.upstream.connection import UpstreamConnection
from gateway.upstream.errors import (
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamPoolTimeout,
    UpstreamTimeout,
)
from gateway.upstream.origin import Origin, parse_origin
from gateway.upstream.response import UpstreamResponse
from gateway.upstream.streamed_body import StreamedBody


class OriginConnections:
    """At most `max_connections` connections to one backend; idle ones are reused newest first."""

    def __init__(self, url: str, bounds: BackendLimits | None = None) -> None:
        self.origin: Origin = parse_origin(url)
        self.bounds = bounds if bounds is not None else BackendLimits()
        # One slot per connection in use: a new connection is opened only when none is idle,
        # so in use plus idle never exceeds the bound.
        self._slots = asyncio.Semaphore(self.bounds.max_connections)
        # Newest last: reusing the most recent connection leaves older ones to the backend's
        # idle timeout, and the recent one is the least likely to have been closed.
        self._idle: list[UpstreamConnection] = []
        self._closed = False

    @property
    def idle_count(self) -> int:
        """Idle connections waiting to be reused."""
        return len(self._idle)

    async def post(
        self,
        path: str,
        body: bytes | StreamedBody,
        headers: Mapping[str, str],
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> UpstreamResponse:
        """POST `body` to the backend's `path`; return once the response head is in."""
        return await self.request("POST", path, body, headers, connect_timeout, read_timeout)

    async def request(
        self,
        method: str,
        path: str,
        body: bytes | StreamedBody,
        headers: Mapping[str, str],
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> UpstreamResponse:
        """Send `method` (POST, or a bodiless GET) to `path`; return once the head is in.

        A StreamedBody goes chunked, as it is produced; the read timeout starts once it is sent.
        """
        streamed = body if isinstance(body, StreamedBody) else None
        request = self._encode(method, path, body if isinstance(body, bytes) else None, headers)
        await self._take_slot()
        try:
            return await self._post(request, streamed, connect_timeout, read_timeout)
        except BaseException:
            self._slots.release()
            raise

    async def _post(
        self,
        request: bytes,
        body: StreamedBody | None,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> UpstreamResponse:
        connection = self._take_idle()
        if connection is not None:
            try:
                return await self._send(connection, request, body, read_timeout)
            except UpstreamDisconnected:
                if connection.received or (body is not None and body.started):
                    raise
                # The backend closed this idle connection as it was reused (vLLM's uvicorn drops
                # keep-alive connections after 5 s idle): that says nothing about the backend.
                # The only re-send after a write: same backend, a reused connection, not a
                # byte of answer; idle expiry below the backend's keep-alive makes it rare.
        connection = await self._connect(connect_timeout)
        return await self._send(connection, request, body, read_timeout)

    async def _take_slot(self) -> None:
        slots = self._slots
        if not slots.locked():
            await slots.acquire()  # returns at once: no timer on the common path
            return
        wait = self.bounds.pool_wait_timeout_s
        try:
            async with asyncio.timeout(wait):
                await slots.acquire()
        except TimeoutError:
            raise UpstreamPoolTimeout(
                f"all {self.bounds.max_connections} connections were busy for {wait:g} s"
            ) from None

    def close(self) -> None:
        """Close the idle connections; ones in use close when their response is done."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.abort()

    def _encode(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str]
    ) -> bytes:
        """The request's head and, unless it is streamed (None), its body."""
        if method not in ("GET", "POST"):
            raise ValueError(f"method {method!r} is not one the proxy sends")
        if method == "GET" and body != b"":
            raise ValueError("a GET carries no body")
        origin = self.origin
        head = [f"{method} {origin.prefix}{path} HTTP/1.1\r\nHost: {origin.host_header}\r\n"]
        if method == "POST":
            framing = (
                "Transfer-Encoding: chunked" if body is None else f"Content-Length: {len(body)}"
            )
            head.append(f"{framing}\r\n")
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ValueError(f"header {name!r} contains a line break")
            head.append(f"{name}: {value}\r\n")
        head.append("\r\n")
        return "".join(head).encode("latin-1") + (body or b"")

    def _take_idle(self) -> UpstreamConnection | None:
        idle = self._idle
        while idle:
            connection = idle.pop()
            if connection.usable:
                return connection
            connection.abort()
        return None

    async def _send(
        self,
        connection: UpstreamConnection,
        request: bytes,
        body: StreamedBody | None,
        read_timeout: float | None,
    ) -> UpstreamResponse:
        try:
            await connection.request(request, read_timeout, body)
        except BaseException:
            connection.abort()
            raise
        assert connection.headers is not None
        return UpstreamResponse(connection.status, connection.headers, connection, self._finish)

    async def _connect(self, timeout: float | None) -> UpstreamConnection:
        origin = self.origin
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                try:
                    _, connection = await loop.create_connection(
                        lambda: UpstreamConnection(loop, self._forget, self.bounds),
                        origin.host,
                        origin.port,
                        ssl=origin.ssl,
                        server_hostname=origin.host if origin.ssl is not None else None,
                    )
                except OSError as error:
                    raise UpstreamConnectError(origin.address, error) from error
        except TimeoutError:
            raise UpstreamTimeout(
                f"connecting to {origin.address} took over {timeout:g} s"
            ) from None
        return connection

    def _finish(self, connection: UpstreamConnection) -> None:
        self._slots.release()
        if self._closed or not connection.reusable:
            connection.abort()
            return
        connection.make_idle()
        self._idle.append(connection)

    def _forget(self, connection: UpstreamConnection) -> None:
        # An idle connection the backend closed: drop it now rather than when next taken.
        try:
            self._idle.remove(connection)
        except ValueError:
            pass
