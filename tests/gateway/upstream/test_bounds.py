"""The client's bounds on one backend: queued waits for a connection, interim-head floods."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.config import BackendLimits
from gateway.upstream.errors import UpstreamRefused
from gateway.upstream.origin_connections import OriginConnections
from tests.gateway.upstream.raw_server import RawServer, Request, reply

pytestmark = pytest.mark.anyio
HEADERS = {"Content-Type": "application/json"}
PATIENT = 5.0  # a bound no healthy loopback exchange comes near; the tests never time speed


@pytest.fixture
async def serve() -> AsyncIterator[list[RawServer]]:
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        await server.stop()


async def test_a_waiter_gets_the_connection_the_first_call_frees(
    serve: list[RawServer],
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def first_waits(
        request: Request, _: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if request.body == b"1":
            started.set()
            await release.wait()
        writer.write(reply(request.body))
        await writer.drain()
        return True

    server = RawServer(first_waits)
    await server.start()
    serve.append(server)
    connections = OriginConnections(
        server.url, BackendLimits(max_connections=1, pool_wait_timeout_s=PATIENT)
    )
    first = asyncio.create_task(connections.post("/", b"1", HEADERS, PATIENT, PATIENT))
    await asyncio.wait_for(started.wait(), PATIENT)
    # Scheduled before the release reaches the server: the second call finds the one
    # connection busy and queues for it (an unbounded set would open a second one).
    second = asyncio.create_task(connections.post("/", b"2", HEADERS, PATIENT, PATIENT))
    release.set()
    response = await first
    assert await response.read() == b"1"
    response.release()
    response = await second
    assert await response.read() == b"2"
    response.release()
    assert server.connections == 1
    connections.close()


async def test_endless_interim_heads_are_cut_at_the_head_bound(serve: list[RawServer]) -> None:
    async def continues(_: Request, __: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        for _n in range(1000):
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        return False

    server = RawServer(continues)
    await server.start()
    serve.append(server)
    connections = OriginConnections(server.url, BackendLimits(max_head_bytes=1024))
    with pytest.raises(UpstreamRefused, match="1024-byte bound"):
        await connections.post("/", b"{}", HEADERS, PATIENT, PATIENT)
    connections.close()
