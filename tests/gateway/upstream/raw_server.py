"""RawServer: a loopback HTTP/1.1 server whose every byte on the wire a test decides."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class Request:
    """One request as the server read it."""

    line: str
    headers: dict[str, str]
    body: bytes
    connection: int


Handler = Callable[[Request, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class RawServer:
    """Answers each request with `handler`, which writes raw bytes and says whether to go on."""

    handler: Handler
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    eofs: int = 0
    eof_seen: asyncio.Event = field(default_factory=asyncio.Event)
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        number = self.connections
        try:
            while True:
                request = await self._read_request(reader, number)
                if request is None:
                    self.eofs += 1
                    self.eof_seen.set()
                    return
                self.requests.append(request)
                if not await self.handler(request, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.eofs += 1
            self.eof_seen.set()
        finally:
            writer.close()
            self._tasks.discard(task)

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader, number: int) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        line, *fields = head.decode("latin-1").split("\r\n")[:-2]
        headers = {}
        for text in fields:
            name, _, value = text.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return Request(line, headers, body, number)


async def wait_for_eof(reader: asyncio.StreamReader) -> None:
    """Read until the client closes its side."""
    while await reader.read(65536):
        pass


def reply(
    body: bytes, *, status: str = "200 OK", extra: str = "", content_type: str = "application/json"
) -> bytes:
    """A whole Content-Length response."""
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)
LAST_CHUNK = b"0\r\n\r\n"
