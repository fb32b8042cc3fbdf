"""A StreamedBody through the upstream client: chunked as produced, sent once, cut on errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.errors import GatewayError
from gateway.upstream.errors import UpstreamDisconnected
from gateway.upstream.origin_connections import OriginConnections
from gateway.upstream.streamed_body import StreamedBody, replayable
from tests.gateway.upstream.raw_server import RawServer, Request, reply
from tests.gateway.upstream.test_client import PATIENT, _start, serve  # noqa: F401

pytestmark = pytest.mark.anyio
Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter
HEADERS = {"X-Request-Id": "req-1"}


class Pieces(StreamedBody):
    """Yields its pieces in order, then raises `fail` if given."""

    content_type = "multipart/form-data; boundary=b"

    def __init__(self, *pieces: bytes, fail: BaseException | None = None) -> None:
        self.pieces = pieces
        self.fail = fail

    async def chunks(self) -> AsyncIterator[bytes]:
        self.started = True
        for piece in self.pieces:
            yield piece
        if self.fail is not None:
            raise self.fail


async def _read_chunked(reader: Reader) -> bytes:
    body = b""
    while size := int((await reader.readline()).strip(), 16):
        body += (await reader.readexactly(size + 2))[:size]
    await reader.readexactly(2)
    return body


async def _echo_chunked(request: Request, reader: Reader, writer: Writer) -> bool:
    assert request.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in request.headers
    writer.write(reply(await _read_chunked(reader)))
    await writer.drain()
    return True


async def _post(connections: OriginConnections, body: StreamedBody) -> bytes:
    response = await connections.post("/v1/audio/transcriptions", body, HEADERS, PATIENT, PATIENT)
    try:
        return await response.read()
    finally:
        response.release()


async def test_a_streamed_body_goes_chunked_and_its_connection_is_kept(
    serve: list[RawServer],  # noqa: F811
) -> None:
    server = await _start(serve, _echo_chunked)
    connections = OriginConnections(server.url)
    body = Pieces(b"first ", b"", b"x" * 300_000, b" last")
    assert replayable(body)
    assert await _post(connections, body) == b"first " + b"x" * 300_000 + b" last"
    assert not replayable(body)
    assert await _post(connections, Pieces(b"again")) == b"again"
    assert server.connections == 1
    connections.close()


async def test_a_body_that_fails_mid_way_cuts_the_request(
    serve: list[RawServer],  # noqa: F811
) -> None:
    cut = asyncio.Event()
    heard: list[bytes] = []

    async def reads_until_cut(_: Request, reader: Reader, __: Writer) -> bool:
        try:
            heard.append(await _read_chunked(reader))
        except (asyncio.IncompleteReadError, ValueError):
            cut.set()
        return False

    server = await _start(serve, reads_until_cut)
    connections = OriginConnections(server.url)
    refusal = GatewayError(413, "too big")
    with pytest.raises(GatewayError) as raised:
        await _post(connections, Pieces(b"part", fail=refusal))
    assert raised.value is refusal
    await asyncio.wait_for(cut.wait(), PATIENT)
    assert heard == []  # the last chunk never went: no whole request reached the backend
    connections.close()


async def test_a_started_body_is_not_sent_again_when_a_reused_connection_closes(
    serve: list[RawServer],  # noqa: F811
) -> None:
    async def drops_the_second(request: Request, reader: Reader, writer: Writer) -> bool:
        if "transfer-encoding" in request.headers:
            return False  # the keep-alive connection closes under the upload
        writer.write(reply(request.body))
        await writer.drain()
        return True

    server = await _start(serve, drops_the_second)
    connections = OriginConnections(server.url)
    response = await connections.post("/x", b"1", HEADERS, PATIENT, PATIENT)
    assert await response.read() == b"1"
    response.release()
    assert connections.idle_count == 1
    # A JSON body would be re-sent on a new connection; an upload that started cannot be.
    with pytest.raises(UpstreamDisconnected):
        await _post(connections, Pieces(b"audio"))
    assert server.connections == 1
    connections.close()
