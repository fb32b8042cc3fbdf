"""UpstreamResponse: a backend's answer, its body read whole or as it arrives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from gateway.upstream.connection import UpstreamConnection
from gateway.upstream.headers import Headers


class UpstreamResponse:
    """Status and headers of a response whose body is still on its connection."""

    __slots__ = ("_connection", "_finish", "_finished", "headers", "status")

    def __init__(
        self,
        status: int,
        headers: Headers,
        connection: UpstreamConnection,
        finish: Callable[[UpstreamConnection], None],
    ) -> None:
        self.status = status
        self.headers = headers
        self._connection = connection
        self._finish = finish
        self._finished = False

    async def read(self) -> bytes:
        """The whole body."""
        return await self._connection.read_all()

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        """Body bytes as they arrive (chunked framing already removed)."""
        while data := await self._connection.next_chunk():
            yield data

    def next_chunk(self) -> Awaitable[bytes]:
        """The body bytes that arrived since the last call; b"" once the body is complete.

        What a stream's relay awaits per event: an async generator would add a frame and an
        awaitable object to every event.
        """
        return self._connection.next_chunk()

    def release(self) -> None:
        """Hand the connection back: pooled if the body was read in full and may be kept."""
        if not self._finished:
            self._finished = True
            self._finish(self._connection)

    def close(self) -> None:
        """Done with the response: a body not read in full closes the connection."""
        self.release()
