"""HostileBackend: a loopback socket server, in its own thread, whose POST replies a test writes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson

from tests.support.waiting import wait_until

Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter


@dataclass
class Post:
    """One POST as the backend read it."""

    path: str
    request_id: str
    body: bytes
    connection: int


# Answers one POST by writing raw bytes; returns whether to keep the connection for more.
Behaviour = Callable[[Post, Reader, Writer], Awaitable[bool]]
# Answers one GET of /metrics (given its path); returns whether to keep the connection.
PageWriter = Callable[[str, Writer], Awaitable[bool]]


def completion(content: str = "fine") -> bytes:
    """A chat completion body as vLLM writes it."""
    return orjson.dumps(
        {
            "id": "chatcmpl-hostile",
            "object": "chat.completion",
            "created": 1,
            "model": "hostile",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        }
    )


def stream_event(content: str) -> bytes:
    """One chat.completion.chunk event."""
    chunk = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "hostile",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def head(status: str = "200 OK", fields: str = "") -> bytes:
    """A response head with the given extra header lines (each ending in CRLF)."""
    return f"HTTP/1.1 {status}\r\n{fields}\r\n".encode("latin-1")


def whole(body: bytes, fields: str = "Content-Type: application/json\r\n") -> bytes:
    """A Content-Length response."""
    return head(fields=f"{fields}Content-Length: {len(body)}\r\n") + body


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def answer_fine(_: Post, __: Reader, writer: Writer) -> bool:
    """A well-behaved keep-alive answer."""
    writer.write(whole(completion()))
    await writer.drain()
    return True


@dataclass
class HostileBackend:
    """Serves /health, /metrics and /v1/models under any prefix; POSTs go to `behaviour`."""

    behaviour: Behaviour = answer_fine
    metrics_page: PageWriter | None = None
    posts: list[Post] = field(default_factory=list)
    closed: set[int] = field(default_factory=set)
    notes: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _server: asyncio.Server | None = None
    _connections: int = 0
    _port: int = 0

    @property
    def url(self) -> str:
        """Base URL of the backend."""
        return f"http://127.0.0.1:{self._port}"

    def note(self, what: str) -> None:
        """Record that something happened (a behaviour calls this from the server thread)."""
        with self._lock:
            self.notes.add(what)

    def wait_for(self, condition: Callable[[], bool], timeout: float = 20.0) -> None:
        """Poll `condition` until it holds, or fail after `timeout` seconds."""
        wait_until(
            condition,
            timeout=timeout,
            what="the backend seeing what the test waited for",
            poll=0.02,
        )

    def posts_for(self, request_id: str) -> list[Post]:
        """POSTs that carried this X-Request-Id."""
        with self._lock:
            return [p for p in self.posts if p.request_id == request_id]

    def set_event(self) -> asyncio.Event:
        """An event on the server's loop, which the test may set from its own thread."""
        return asyncio.run_coroutine_threadsafe(_new_event(), self._loop).result(5)

    def fire(self, event: asyncio.Event) -> None:
        """Set an event made by `set_event`."""
        self._loop.call_soon_threadsafe(event.set)

    @contextmanager
    def running(self) -> Iterator[HostileBackend]:
        """Serve on a free loopback port until the block ends."""
        thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(5)
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(10)
            self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: Reader, writer: Writer) -> None:
        self._connections += 1
        number = self._connections
        try:
            while await self._one(reader, writer, number):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with self._lock:
                self.closed.add(number)
            writer.close()

    async def _one(self, reader: Reader, writer: Writer, number: int) -> bool:
        raw = await reader.readuntil(b"\r\n\r\n")
        line, *lines = raw.decode("latin-1").split("\r\n")[:-2]
        fields = {}
        for text in lines:
            name, _, value = text.partition(":")
            fields[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(fields.get("content-length", "0")))
        method, path, _ = line.split(" ")
        if method == "POST":
            post = Post(path, fields.get("x-request-id", ""), body, number)
            with self._lock:
                self.posts.append(post)
            return await self.behaviour(post, reader, writer)
        if path.endswith("/metrics") and self.metrics_page is not None:
            return await self.metrics_page(path, writer)
        if path.endswith("/v1/models"):
            page = orjson.dumps({"object": "list", "data": [{"id": "hostile", "object": "model"}]})
            writer.write(whole(page))
        else:
            writer.write(whole(b"", fields=""))
        await writer.drain()
        return True


async def _new_event() -> asyncio.Event:
    return asyncio.Event()
