"""The upstream client against real loopback servers: framing, keep-alive, failures, cancelling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from gateway.upstream.connections_by_origin import ConnectionsByOrigin
from gateway.upstream.errors import (
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamPayloadError,
    UpstreamTimeout,
)
from gateway.upstream.origin_connections import OriginConnections
from gateway.upstream.response import UpstreamResponse
from plumbline.child_process import free_port
from tests.gateway.upstream.raw_server import (
    CHUNKED_HEAD,
    LAST_CHUNK,
    Handler,
    RawServer,
    Request,
    chunk,
    reply,
    wait_for_eof,
)

pytestmark = pytest.mark.anyio
Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter
HEADERS = {"Content-Type": "application/json", "X-Request-Id": "req-1"}
PATIENT = 5.0  # a bound no healthy loopback exchange comes near; the tests never time speed


@pytest.fixture
async def serve() -> AsyncIterator[list[RawServer]]:
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        await server.stop()


async def _start(servers: list[RawServer], handler: Handler) -> RawServer:
    server = RawServer(handler)
    await server.start()
    servers.append(server)
    return server


async def _post(
    connections: OriginConnections, body: bytes = b"{}", read_timeout: float = PATIENT
) -> bytes:
    response = await connections.post("/v1/chat/completions", body, HEADERS, PATIENT, read_timeout)
    try:
        return await response.read()
    finally:
        response.release()


async def _echo(request: Request, _: Reader, writer: Writer) -> bool:
    writer.write(reply(b'{"echo": ' + request.body + b"}", extra="X-Twice: a\r\nX-Twice: b\r\n"))
    await writer.drain()
    return True


async def test_a_content_length_body_and_the_request_as_sent(serve: list[RawServer]) -> None:
    server = await _start(serve, _echo)
    connections = OriginConnections(f"{server.url}/prefix")
    response = await connections.post("/v1/completions", b'{"a":1}', HEADERS, PATIENT, PATIENT)
    assert response.status == 200
    assert response.headers.get("content-type") == "application/json"
    assert response.headers["CONTENT-TYPE"] == "application/json"
    assert response.headers.get("X-Twice") == "a, b"
    assert response.headers.get("X-Absent", "none") == "none"
    assert await response.read() == b'{"echo": {"a":1}}'
    response.release()
    request = server.requests[0]
    assert request.line == "POST /prefix/v1/completions HTTP/1.1"
    assert request.headers["host"] == server.url.removeprefix("http://")
    assert request.headers["content-length"] == "7"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-request-id"] == "req-1"
    connections.close()


async def test_keep_alive_reuses_one_connection(serve: list[RawServer]) -> None:
    server = await _start(serve, _echo)
    connections = OriginConnections(server.url)
    for n in range(5):
        assert await _post(connections, str(n).encode()) == b'{"echo": ' + str(n).encode() + b"}"
    assert server.connections == 1
    assert connections.idle_count == 1
    connections.close()
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    assert connections.idle_count == 0


async def test_concurrent_calls_open_more_connections_and_reuse_the_newest(
    serve: list[RawServer],
) -> None:
    gate = asyncio.Event()

    async def held(request: Request, _: Reader, writer: Writer) -> bool:
        await gate.wait()
        writer.write(reply(request.body))
        return True

    server = await _start(serve, held)
    connections = OriginConnections(server.url)
    calls = [asyncio.create_task(_post(connections, str(n).encode())) for n in range(4)]
    while len(server.requests) < 4:
        await asyncio.sleep(0.01)
    gate.set()
    assert await asyncio.gather(*calls) == [b"0", b"1", b"2", b"3"]
    assert server.connections == 4 and connections.idle_count == 4
    await _post(connections)
    assert server.requests[-1].connection == server.requests[3].connection
    connections.close()


async def test_a_chunked_body_is_decoded(serve: list[RawServer]) -> None:
    async def chunked(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD + chunk(b"hello, ") + chunk(b"world"))
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.write(chunk(b"!") + LAST_CHUNK)
        return True

    server = await _start(serve, chunked)
    connections = OriginConnections(server.url)
    assert await _post(connections) == b"hello, world!"
    response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, PATIENT)
    assert response.headers.get("Content-Type") == "text/event-stream"
    assert b"".join([data async for data in response.iter_chunks()]) == b"hello, world!"
    response.release()
    assert server.connections == 1 and connections.idle_count == 1
    connections.close()


async def test_a_stream_arrives_event_by_event(serve: list[RawServer]) -> None:
    next_event = asyncio.Event()
    events = [b'data: {"n": %d}\n\n' % n for n in range(3)] + [b"data: [DONE]\n\n"]

    async def sse(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD)
        for event in events:
            # The next event is written only once the client has seen this one.
            writer.write(chunk(event))
            await writer.drain()
            await next_event.wait()
            next_event.clear()
        writer.write(LAST_CHUNK)
        return True

    server = await _start(serve, sse)
    connections = OriginConnections(server.url)
    response = await connections.post("/v1/chat/completions", b"{}", HEADERS, PATIENT, PATIENT)
    seen = []
    async for data in response.iter_chunks():
        seen.append(data)
        next_event.set()
    assert seen == events
    response.release()
    assert connections.idle_count == 1
    connections.close()


async def test_a_large_stream_read_slowly_arrives_intact(serve: list[RawServer]) -> None:
    payload = bytes(range(256)) * 16 * 1024  # 4 MiB: past the pause threshold many times

    async def big(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD)
        for start in range(0, len(payload), 65536):
            writer.write(chunk(payload[start : start + 65536]))
            await writer.drain()
        writer.write(LAST_CHUNK)
        await writer.drain()
        return True

    server = await _start(serve, big)
    connections = OriginConnections(server.url)
    response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, PATIENT)
    received = bytearray()
    async for data in response.iter_chunks():
        received += data
        await asyncio.sleep(0.001)
    assert received == payload
    response.release()
    assert connections.idle_count == 1
    connections.close()


async def test_connection_close_is_not_pooled(serve: list[RawServer]) -> None:
    async def closing(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(reply(b"{}", extra="Connection: close\r\n"))
        await writer.drain()
        return False

    server = await _start(serve, closing)
    connections = OriginConnections(server.url)
    assert await _post(connections) == b"{}"
    assert connections.idle_count == 0
    assert await _post(connections) == b"{}"
    assert server.connections == 2
    connections.close()


async def test_an_http_1_0_body_runs_to_eof_and_is_not_pooled(serve: list[RawServer]) -> None:
    async def old(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n")
        await writer.drain()
        writer.write(b'{"old": true}')
        await writer.drain()
        return False

    server = await _start(serve, old)
    connections = OriginConnections(server.url)
    assert await _post(connections) == b'{"old": true}'
    assert connections.idle_count == 0
    connections.close()


async def test_an_idle_connection_the_backend_closed_is_replaced(serve: list[RawServer]) -> None:
    async def once(request: Request, _: Reader, writer: Writer) -> bool:
        writer.write(reply(request.body))
        await writer.drain()
        return False  # keep-alive promised, then closed, as an idle timeout does

    server = await _start(serve, once)
    connections = OriginConnections(server.url)
    assert await _post(connections, b"1") == b"1"
    await asyncio.wait_for(_until(lambda: connections.idle_count == 0), PATIENT)
    assert await _post(connections, b"2") == b"2"
    assert server.connections == 2
    connections.close()


async def test_a_reused_connection_closed_under_the_request_is_retried_once(
    serve: list[RawServer],
) -> None:
    async def stale_second(request: Request, _: Reader, writer: Writer) -> bool:
        if request.body == b"2" and request.connection == 1:
            return False  # the close raced the reuse: the request is dropped unanswered
        writer.write(reply(request.body))
        await writer.drain()
        return True

    server = await _start(serve, stale_second)
    connections = OriginConnections(server.url)
    assert await _post(connections, b"1") == b"1"
    assert connections.idle_count == 1
    assert await _post(connections, b"2") == b"2"
    assert [r.connection for r in server.requests] == [1, 1, 2]
    connections.close()


async def test_a_fresh_connection_closed_before_a_response_is_an_error(
    serve: list[RawServer],
) -> None:
    async def rude(_: Request, __: Reader, ___: Writer) -> bool:
        return False

    server = await _start(serve, rude)
    connections = OriginConnections(server.url)
    with pytest.raises(UpstreamDisconnected, match="Server disconnected"):
        await _post(connections)
    assert server.connections == 1
    connections.close()


async def test_a_garbled_head_is_a_disconnect(serve: list[RawServer]) -> None:
    async def garbled(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")
        await writer.drain()
        return True

    server = await _start(serve, garbled)
    connections = OriginConnections(server.url)
    with pytest.raises(UpstreamDisconnected, match="Invalid response head"):
        await _post(connections)
    connections.close()


async def test_a_body_cut_short_is_a_payload_error(serve: list[RawServer]) -> None:
    async def short(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 50)
        await writer.drain()
        return False

    server = await _start(serve, short)
    connections = OriginConnections(server.url)
    with pytest.raises(UpstreamPayloadError, match="not completed"):
        await _post(connections)
    assert connections.idle_count == 0
    connections.close()


async def test_a_stream_cut_short_delivers_what_came_then_fails(serve: list[RawServer]) -> None:
    async def cut(_: Request, __: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD + chunk(b"data: 1\n\n"))
        await writer.drain()
        return False

    server = await _start(serve, cut)
    connections = OriginConnections(server.url)
    response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, PATIENT)
    seen: list[bytes] = []
    with pytest.raises(UpstreamPayloadError):
        await _collect(response, seen)
    assert seen == [b"data: 1\n\n"]
    response.close()
    connections.close()


async def test_a_stall_before_the_head_is_a_timeout(serve: list[RawServer]) -> None:
    async def silent(_: Request, reader: Reader, __: Writer) -> bool:
        await wait_for_eof(reader)
        return True  # the server goes on to read the EOF and counts it

    server = await _start(serve, silent)
    connections = OriginConnections(server.url)
    with pytest.raises(TimeoutError):
        await _post(connections, read_timeout=0.2)
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    connections.close()


async def test_a_stall_mid_stream_is_a_timeout_but_steady_bytes_are_not(
    serve: list[RawServer],
) -> None:
    async def trickle(_: Request, reader: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD)
        # Ten gaps of 0.1 s outlast the 0.6 s read timeout in total, but no single gap does.
        for _n in range(10):
            writer.write(chunk(b"data: x\n\n"))
            await writer.drain()
            await asyncio.sleep(0.1)
        await wait_for_eof(reader)
        return True  # the server goes on to read the EOF and counts it

    server = await _start(serve, trickle)
    connections = OriginConnections(server.url)
    response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, 0.6)
    seen: list[bytes] = []
    with pytest.raises(UpstreamTimeout):
        await _collect(response, seen)
    assert b"".join(seen) == b"data: x\n\n" * 10
    response.close()
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    connections.close()


async def test_a_refused_connection_is_a_connect_error() -> None:
    connections = OriginConnections(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(UpstreamConnectError) as raised:
        await _post(connections)
    assert isinstance(raised.value.os_error, ConnectionRefusedError)
    assert "Cannot connect to host 127.0.0.1:" in str(raised.value)


async def test_cancelling_a_stream_closes_the_socket(serve: list[RawServer]) -> None:
    async def endless(_: Request, reader: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await wait_for_eof(reader)
        return True  # the server goes on to read the EOF and counts it

    server = await _start(serve, endless)
    connections = OriginConnections(server.url)
    first = asyncio.Event()

    async def consume() -> None:
        response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, PATIENT)
        async for _ in response.iter_chunks():
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), PATIENT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    assert connections.idle_count == 0
    connections.close()


async def test_cancelling_before_the_head_closes_the_socket(serve: list[RawServer]) -> None:
    async def silent(_: Request, reader: Reader, __: Writer) -> bool:
        await wait_for_eof(reader)
        return True  # the server goes on to read the EOF and counts it

    server = await _start(serve, silent)
    connections = OriginConnections(server.url)
    task = asyncio.create_task(_post(connections))
    await asyncio.wait_for(_until(lambda: len(server.requests) == 1), PATIENT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    connections.close()


async def test_releasing_an_unread_response_drops_its_connection(serve: list[RawServer]) -> None:
    async def endless(_: Request, reader: Reader, writer: Writer) -> bool:
        writer.write(CHUNKED_HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await wait_for_eof(reader)
        return True  # the server goes on to read the EOF and counts it

    server = await _start(serve, endless)
    connections = OriginConnections(server.url)
    response = await connections.post("/v1/x", b"{}", HEADERS, PATIENT, PATIENT)
    response.release()
    assert connections.idle_count == 0
    await asyncio.wait_for(server.eof_seen.wait(), PATIENT)
    connections.close()


async def test_one_connection_set_is_kept_per_backend_url(serve: list[RawServer]) -> None:
    first = await _start(serve, _echo)
    second = await _start(serve, _echo)
    upstream = ConnectionsByOrigin()
    for url in (first.url, second.url, first.url):
        response = await upstream.backend(url).post("/v1/x", b"1", HEADERS, PATIENT, PATIENT)
        assert await response.read() == b'{"echo": 1}'
        response.release()
    assert (first.connections, second.connections) == (1, 1)
    assert upstream.backend(first.url).idle_count == 1
    upstream.close()
    await asyncio.wait_for(first.eof_seen.wait(), PATIENT)
    await asyncio.wait_for(second.eof_seen.wait(), PATIENT)


async def test_a_header_with_a_line_break_is_refused(serve: list[RawServer]) -> None:
    server = await _start(serve, _echo)
    connections = OriginConnections(server.url)
    with pytest.raises(ValueError, match="line break"):
        await connections.post("/v1/x", b"{}", {"X-Request-Id": "a\r\nX-Evil: 1"}, PATIENT, PATIENT)
    assert server.connections == 0


async def _collect(response: UpstreamResponse, into: list[bytes]) -> None:
    async for data in response.iter_chunks():
        into.append(data)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_a_get_goes_out_bodiless_on_the_same_keep_alive_connection(
    serve: list[RawServer],
) -> None:
    server = await _start(serve, _echo)
    connections = OriginConnections(server.url)
    response = await connections.request(
        "GET", "/v1/responses/resp_1?stream=true", b"", {"X-Request-Id": "r"}, PATIENT, PATIENT
    )
    assert (response.status, await response.read()) == (200, b'{"echo": }')
    response.release()
    assert await _post(connections) == b'{"echo": {}}'
    first, second = server.requests
    assert first.line == "GET /v1/responses/resp_1?stream=true HTTP/1.1"
    assert "content-length" not in first.headers and first.body == b""
    assert second.connection == first.connection
    with pytest.raises(ValueError, match="no body"):
        await connections.request("GET", "/x", b"{}", {}, PATIENT, PATIENT)
    with pytest.raises(ValueError, match="not one the proxy sends"):
        await connections.request("DELETE", "/x", b"", {}, PATIENT, PATIENT)
    connections.close()
