"""UpstreamConnection: one HTTP/1.1 connection to a backend, its responses parsed by httptools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import httptools

from gateway.config import BackendLimits
from gateway.upstream.errors import (
    UpstreamDisconnected,
    UpstreamError,
    UpstreamPayloadError,
    UpstreamRefused,
    UpstreamTimeout,
)
from gateway.upstream.headers import Headers
from gateway.upstream.streamed_body import StreamedBody

# Past this much unread streamed body the socket stops being read, so a slow client holds back
# the backend instead of growing the gateway's memory.
HIGH_WATER = 1 << 18


class UpstreamConnection(asyncio.Protocol):
    """A keep-alive connection that carries one request at a time."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_idle_lost: Callable[[UpstreamConnection], None],
        bounds: BackendLimits,
    ) -> None:
        self._loop = loop
        self._on_idle_lost = on_idle_lost
        self._bounds = bounds
        self._idle_timer: asyncio.TimerHandle | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self.closed = False
        self.busy = False
        # Set while the transport's write buffer is over its high-water mark.
        self._write_paused = False
        self._drained: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.received = False
        self.status = 0
        self.headers: Headers | None = None
        self._raw_headers: list[tuple[bytes, bytes]] = []
        self._informational = False
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._whole = False
        self._complete = False
        self._keep_alive = False
        self._until_eof = False
        self._extra = False
        # A streamed request body the backend answered before it was all sent.
        self._body_cut = False
        self._error: UpstreamError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._timer: asyncio.TimerHandle | None = None
        self._read_timeout = 0.0
        self._last_data = 0.0
        # Head bytes and fields count across interim (1xx) heads too, so endless ones are cut.
        self._head_bytes = 0
        self._header_count = 0
        self._field_bytes = 0
        self._body_bytes = 0

    @property
    def usable(self) -> bool:
        """Open, and not told by the backend that it is closing."""
        return not self.closed and self._transport is not None and not self._transport.is_closing()

    @property
    def reusable(self) -> bool:
        """Its response was read in full and both sides agreed to keep the connection."""
        return (
            self.usable
            and self._complete
            and self._keep_alive
            and not self._extra
            and not self._body_cut
            and self._error is None
            and not self._chunks
        )

    def abort(self) -> None:
        """Drop the connection now; a backend still generating sees it and stops."""
        self._cancel_timer()
        self._cancel_idle_timer()
        if not self.closed:
            self.closed = True
            if self._transport is not None:
                self._transport.abort()

    def make_idle(self) -> None:
        """Forget the finished response, ready for the next request; closed if unused too long."""
        self._cancel_timer()
        self.busy = False
        self._reset()
        self._idle_timer = self._loop.call_later(self._bounds.idle_expiry_s, self.abort)

    def _cancel_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    async def request(
        self, data: bytes, read_timeout: float | None, body: StreamedBody | None = None
    ) -> None:
        """Send a request (`data`, then `body` chunked) and wait for the response head."""
        assert self._transport is not None
        self._cancel_timer()
        self._cancel_idle_timer()
        self._reset()
        if self._transport.is_closing():
            self.abort()
            raise UpstreamDisconnected(
                "The connection closed before the request was sent", request_written=False
            )
        self.busy = True
        self._transport.write(data)
        if body is not None:
            await self._send_chunked(body, read_timeout)
        if read_timeout is not None:
            self._read_timeout = read_timeout
            self._last_data = self._loop.time()
            self._timer = self._loop.call_at(self._last_data + read_timeout, self._on_timer)
        while self.headers is None:
            if self._error is not None:
                self.abort()
                raise self._error
            await self._wait()

    async def _send_chunked(self, body: StreamedBody, read_timeout: float | None) -> None:
        """Write `body` as it is produced, at the pace the backend reads it.

        A backend that stops reading for `read_timeout` ends the call (TimeoutError), as one
        that stops answering does: the upload must not hold the connection and the call forever.
        """
        transport = self._transport
        assert transport is not None
        async for chunk in body.chunks():
            if self.headers is not None or self._error is not None or self.closed:
                # Answered (or gone) before the whole body was sent: the rest has nowhere to go.
                self._body_cut = True
                break
            if chunk:
                transport.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
            if self._write_paused:
                async with asyncio.timeout(read_timeout):
                    await self._until_drained()
        else:
            transport.write(b"0\r\n\r\n")

    async def _until_drained(self) -> None:
        self._drained = drained = self._loop.create_future()
        try:
            await drained
        except BaseException:
            self.abort()
            raise
        finally:
            self._drained = None

    def pause_writing(self) -> None:
        """The backend reads the upload slower than it comes: stop taking more of it."""
        self._write_paused = True

    def resume_writing(self) -> None:
        """The write buffer drained: the upload may go on."""
        self._write_paused = False
        drained = self._drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    async def next_chunk(self) -> bytes:
        """The body bytes that arrived since the last call; b"" once the body is complete."""
        while True:
            chunks = self._chunks
            if chunks:
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self._chunks = []
                self._buffered = 0
                if self._paused:
                    self._resume()
                return data
            if self._error is not None:
                self.abort()
                raise self._error
            if self._complete:
                return b""
            # `_wait`, inlined: a stream waits here once per event.
            self._waiter = waiter = self._loop.create_future()
            try:
                await waiter
            except BaseException:
                self.abort()
                raise
            finally:
                self._waiter = None

    async def read_all(self) -> bytes:
        """The rest of the body, once it has all arrived."""
        self._whole = True
        limit = self._bounds.max_body_bytes
        # llhttp accepts only digits here, once: int() cannot fail.
        declared = self.headers.get("content-length") if self.headers is not None else None
        if declared is not None and int(declared) > limit:
            self._refuse(f"declares a {declared}-byte body, over the {limit}-byte bound")
        else:
            self._check_body()
        if self._paused:
            self._resume()
        while True:
            if self._error is not None:
                self.abort()
                raise self._error
            if self._complete:
                break
            await self._wait()
        body = b"".join(self._chunks)
        self._chunks = []
        self._buffered = 0
        return body

    async def _wait(self) -> None:
        self._waiter = waiter = self._loop.create_future()
        try:
            await waiter
        except BaseException:
            # Cancelled (the client went away): closing the socket is what stops the backend.
            self.abort()
            raise
        finally:
            self._waiter = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, error: UpstreamError) -> None:
        if self._error is None and not self._complete:
            self._error = error
        self._cancel_timer()
        self._wake()

    def _refuse(self, why: str) -> None:
        """Fail the response for breaking a bound, and drop the connection."""
        self._fail(UpstreamRefused(f"The response {why}"))
        self.abort()

    def _check_body(self) -> None:
        limit = self._bounds.max_body_bytes
        if self._body_bytes > limit:
            self._refuse(f"body is over the {limit}-byte bound")

    def _resume(self) -> None:
        self._paused = False
        self._last_data = self._loop.time()
        if self._transport is not None and not self.closed:
            self._transport.resume_reading()

    def _on_timer(self) -> None:
        self._timer = None
        if not self.busy or self._complete or self._error is not None:
            return
        now = self._loop.time()
        # A paused socket waits on our client, not the backend: that is no silence to punish.
        deadline = (
            now + self._read_timeout if self._paused else self._last_data + self._read_timeout
        )
        if deadline > now:
            self._timer = self._loop.call_at(deadline, self._on_timer)
            return
        self._fail(UpstreamTimeout(f"no bytes from the backend for {self._read_timeout:g} s"))
        self.abort()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to write requests to."""
        # uvloop's transports are not registered as asyncio.Transport, so no isinstance check.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        """Parse what arrived; the parser calls the on_* methods below."""
        if not self.busy or self._complete:
            # Bytes nobody asked for: the connection's framing can no longer be trusted.
            self._extra = True
            self.abort()
            return
        self.received = True
        self._last_data = self._loop.time()
        in_head = self.headers is None
        if in_head:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            if self.headers is None:
                self._fail(UpstreamDisconnected(f"Invalid response head: {error}"))
            else:
                self._fail(UpstreamPayloadError(f"Response payload is malformed: {error}"))
            self.abort()
            return
        if self._error is not None:
            self.abort()
        elif in_head and self.headers is None and self._head_bytes > self._bounds.max_head_bytes:
            # One endless field never reaches on_header: the bytes fed so far are the measure.
            self._refuse(f"head is over the {self._bounds.max_head_bytes}-byte bound")

    def eof_received(self) -> bool:
        """Let the transport close; connection_lost decides what the EOF meant."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """Settle the response in flight, or leave the idle pool."""
        self.closed = True
        self._cancel_timer()
        self.resume_writing()
        if not self.busy:
            self._on_idle_lost(self)
            return
        if self._complete:
            return
        why = f" ({exc})" if exc is not None else ""
        if self.headers is None:
            self._fail(UpstreamDisconnected(f"Server disconnected{why}"))
        elif self._until_eof and exc is None:
            self.on_message_complete()
        else:
            self._fail(UpstreamPayloadError(f"Response payload is not completed{why}"))

    # httptools callbacks: they must not raise, or the parser reports a callback error.

    def on_message_begin(self) -> None:
        """A second response on one request means the stream is out of step."""
        if self._complete:
            self._extra = True

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header field, within the head's bounds."""
        if self._complete or self._error is not None:
            return
        bounds = self._bounds
        self._header_count += 1
        self._field_bytes += len(name) + len(value) + 4
        if self._header_count > bounds.max_header_count:
            self._fail(UpstreamRefused(f"The response has over {bounds.max_header_count} headers"))
            return
        if self._field_bytes > bounds.max_head_bytes:
            self._fail(
                UpstreamRefused(f"The response head is over the {bounds.max_head_bytes}-byte bound")
            )
            return
        self._raw_headers.append((name, value))

    def on_headers_complete(self) -> None:
        """The head is in: publish status and headers, unless its framing is refused."""
        if self._complete or self._error is not None:
            return
        status = self._parser.get_status_code()
        if status == 101:
            # Nothing asked to switch protocols: what follows is not HTTP the gateway can frame.
            self._fail(UpstreamRefused("The backend answered 101 Switching Protocols unasked"))
            return
        if status < 200:
            # An interim response (100 Continue): the real one follows on the same connection.
            self._informational = True
            self._raw_headers = []
            return
        headers = Headers(self._raw_headers)
        self._raw_headers = []
        coding = headers.get("transfer-encoding")
        if coding is not None and coding.rsplit(",", 1)[-1].strip().lower() != "chunked":
            # A body framed by neither chunks nor a length only ends at close; a proxy that
            # reads it differently from the backend is how responses get smuggled.
            self._fail(UpstreamRefused(f"Transfer-Encoding {coding!r} does not end in chunked"))
            return
        self.status = status
        self.headers = headers
        self._until_eof = (
            status not in (204, 304)
            and "content-length" not in headers
            and "transfer-encoding" not in headers
        )
        self._wake()

    def on_body(self, body: bytes) -> None:
        """Buffer body bytes for the reader, pausing the socket if the reader falls behind."""
        if self._complete or self._error is not None:
            return
        self._chunks.append(body)
        self._buffered += len(body)
        self._body_bytes += len(body)
        if self._whole:
            self._check_body()
        if not self._whole and not self._paused and self._buffered > HIGH_WATER:
            self._paused = True
            assert self._transport is not None
            self._transport.pause_reading()
        waiter = self._waiter  # `_wake`, inlined: it runs once per streamed event
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def on_message_complete(self) -> None:
        """The whole response is in."""
        if self._informational:
            self._informational = False
            return
        if self._complete:
            return
        self._complete = True
        self._keep_alive = self._parser.should_keep_alive() and not self._until_eof
        self._cancel_timer()
        self._wake()
