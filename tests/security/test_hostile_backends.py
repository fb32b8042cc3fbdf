"""A hostile or broken backend gets an OpenAI-shaped 502/504, recorded; the gateway serves on."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.security.hostile_backend import (
    HostileBackend,
    Post,
    Reader,
    Writer,
    chunk,
    completion,
    head,
    stream_event,
    whole,
)
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("hostile-backends")
QUESTION = [{"role": "user", "content": "What is the indemnity cap in this contract?"}]
STREAM_BOUND = 16 * 1024 * 1024
BOUNDS = {
    "max_head_bytes": 4096,
    "max_header_count": 32,
    "max_body_bytes": 65536,
    "max_sse_event_bytes": 8192,
    "max_stream_bytes": STREAM_BOUND,
    "max_connections": 2,
    "pool_wait_timeout_s": 0.5,
    "idle_expiry_s": 0.5,
    "stalled_client_timeout_s": 1.0,
}
LABEL = "backend 1 of model `hostile`"
CHUNKED_SSE = "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def backend() -> Iterator[HostileBackend]:
    with HostileBackend().running() as running:
        yield running


@pytest.fixture(scope="module")
def gateway(backend: HostileBackend, database: str) -> Iterator[GatewayProcess]:
    with SimulatorProcess(simulator_config()) as sim:
        config = gateway_config(
            sim.base_url,
            limits={"read_timeout_s": 10.0, "backends": BOUNDS},
            health={"interval_s": 0.3, "timeout_s": 1.0, "max_page_bytes": 65536},
        )
        config["models"] += [
            {"name": "hostile", "backends": [{"url": backend.url}]},
            # Two backends on one server, told apart by path, for the re-send rule.
            {
                "name": "pair",
                "backends": [{"url": f"{backend.url}/a"}, {"url": f"{backend.url}/b"}],
            },
        ]
        process = GatewayProcess(config, database)
        with process:
            yield process


@pytest.fixture(scope="module")
def key(database: str) -> str:
    return issue_key(database, "team-hostile-backends")


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _chat(gateway: GatewayProcess, key: str, model: str = "hostile", **body: Any) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": model, "messages": QUESTION, **body},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def _refused(
    response: httpx.Response, status: int, backend: HostileBackend, calls: CallReader
) -> str:
    """Check the OpenAI-shaped error naming the backend (not its URL) and its record."""
    assert response.status_code == status, response.text[:300]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == status
    assert LABEL in error["message"]
    assert backend.url.removeprefix("http://") not in error["message"]
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == status
    message: str = error["message"]
    return message


def _serves_on(gateway: GatewayProcess, key: str) -> None:
    assert _chat(gateway, key, model="tiny", max_tokens=3).status_code == 200


def _stream_error(response: httpx.Response) -> dict[str, Any]:
    events = [p for p in response.content.split(b"\n\n") if p]
    assert events[-1] == b"data: [DONE]"
    error: dict[str, Any] = orjson.loads(events[-2][6:])["error"]
    return error


def _answer(raw: bytes, keep: bool = False) -> Any:
    async def behaviour(_: Post, __: Reader, writer: Writer) -> bool:
        writer.write(raw)
        await writer.drain()
        return keep

    return behaviour


def _hang(backend: HostileBackend, release: asyncio.Event) -> Any:
    async def behaviour(_: Post, __: Reader, ___: Writer) -> bool:
        await release.wait()
        return False

    return behaviour


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param(f"X-Big: {'b' * 8000}\r\n", id="one-header-over-the-size-bound"),
        pytest.param("".join(f"X-{n}: v\r\n" for n in range(100)), id="over-128-headers"),
    ],
)
def test_a_response_head_over_its_bounds_is_a_502(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader, fields: str
) -> None:
    body = completion()
    backend.behaviour = _answer(whole(body, fields=f"{fields}Content-Type: application/json\r\n"))
    message = _refused(_chat(gateway, key), 502, backend, calls)
    assert "head" in message or "headers" in message
    _serves_on(gateway, key)


def test_an_endless_head_is_cut_at_its_bound(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    release = backend.set_event()

    async def endless(_: Post, __: Reader, writer: Writer) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Endless: ")
        for _kib in range(64):
            writer.write(b"e" * 1024)
            await writer.drain()
        await release.wait()
        return False

    backend.behaviour = endless
    try:
        message = _refused(_chat(gateway, key), 502, backend, calls)
    finally:
        backend.fire(release)
    assert "4096-byte bound" in message
    _serves_on(gateway, key)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_over_its_bound_is_a_502(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader, framing: str
) -> None:
    body = completion("x" * 200_000)
    if framing == "content-length":
        raw = whole(body)
    else:
        fields = "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        pieces = [chunk(body[i : i + 4096]) for i in range(0, len(body), 4096)]
        raw = head(fields=fields) + b"".join(pieces) + b"0\r\n\r\n"
    backend.behaviour = _answer(raw)
    assert "65536-byte bound" in _refused(_chat(gateway, key), 502, backend, calls)
    _serves_on(gateway, key)


def test_an_sse_event_over_its_bound_ends_the_stream_with_a_502(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    huge = stream_event("y" * 20_000)
    pieces = [chunk(huge[i : i + 1000]) for i in range(0, len(huge), 1000)]
    done = chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
    backend.behaviour = _answer(head(fields=CHUNKED_SSE) + b"".join(pieces) + done)
    response = _chat(gateway, key, stream=True)
    assert response.status_code == 200
    error = _stream_error(response)
    assert error["code"] == 502 and LABEL in error["message"]
    assert "over 8192 bytes" in error["message"]
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 502
    _serves_on(gateway, key)


def test_an_endless_stream_is_cut_at_its_bound(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    async def endless(_: Post, __: Reader, writer: Writer) -> bool:
        writer.write(head(fields=CHUNKED_SSE))
        event = chunk(stream_event("word " * 100) * 8)
        while True:
            writer.write(event)
            await writer.drain()

    backend.behaviour = endless
    body = {"model": "hostile", "messages": QUESTION, "stream": True}
    received = bytearray()
    with httpx.stream(
        "POST",
        f"{gateway.url}/v1/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as response:
        for piece in response.iter_raw():
            received += piece
            # Without the bound the stream never ends: the test stops reading at twice it.
            assert len(received) < 2 * STREAM_BOUND, "the endless stream was not cut"
    events = [p for p in bytes(received).split(b"\n\n") if p]
    assert events[-1] == b"data: [DONE]"
    error = orjson.loads(events[-2][6:])["error"]
    assert error["code"] == 502 and LABEL in error["message"]
    assert f"over {STREAM_BOUND} bytes" in error["message"]
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 502
    _serves_on(gateway, key)


def test_101_switching_protocols_is_a_502(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    raw = head("101 Switching Protocols", "Upgrade: websocket\r\nConnection: Upgrade\r\n")
    backend.behaviour = _answer(raw + b"\x81\x05hello")
    assert "101" in _refused(_chat(gateway, key), 502, backend, calls)
    _serves_on(gateway, key)


SSE_BODY = stream_event("smuggled") + b"data: [DONE]\n\n"
SSE_TWO_LENGTHS = "Content-Type: text/event-stream\r\nContent-Length: 5\r\nContent-Length: 7\r\n"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(
            head(fields="Content-Type: text/event-stream\r\nTransfer-Encoding: identity\r\n")
            + SSE_BODY,
            id="transfer-encoding-not-ending-in-chunked",
        ),
        pytest.param(
            head(fields=f"{CHUNKED_SSE}Content-Length: 5\r\n") + chunk(SSE_BODY) + b"0\r\n\r\n",
            id="transfer-encoding-and-content-length",
        ),
        pytest.param(
            head(fields=SSE_TWO_LENGTHS) + SSE_BODY,
            id="conflicting-content-lengths",
        ),
    ],
)
def test_smuggling_style_framing_is_refused(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader, raw: bytes
) -> None:
    backend.behaviour = _answer(raw)
    _refused(_chat(gateway, key, stream=True), 502, backend, calls)
    _serves_on(gateway, key)


def test_connections_per_backend_are_bounded(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    release = backend.set_event()
    backend.behaviour = _hang(backend, release)
    seen = len(backend.posts)
    with ThreadPoolExecutor(2) as pool:
        held = [pool.submit(_chat, gateway, key) for _ in range(2)]
        try:
            backend.wait_for(lambda: len(backend.posts) == seen + 2)
            message = _refused(_chat(gateway, key), 504, backend, calls)
            assert "all 2 connections were busy" in message
            assert len(backend.posts) == seen + 2
        finally:
            backend.fire(release)
        assert [f.result().status_code for f in held] == [502, 502]
    _serves_on(gateway, key)


def test_idle_connections_expire(
    gateway: GatewayProcess, backend: HostileBackend, key: str
) -> None:
    backend.behaviour = _answer(whole(completion()), keep=True)
    response = _chat(gateway, key)
    assert response.status_code == 200
    post = backend.posts_for(response.headers["x-request-id"])[0]
    # The backend keeps the connection open for good: only the gateway's expiry closes it.
    backend.wait_for(lambda: post.connection in backend.closed)


def test_a_stream_whose_client_stopped_reading_frees_the_backend(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    async def endless_stream(post: Post, _: Reader, writer: Writer) -> bool:
        writer.write(head(fields=CHUNKED_SSE))
        event = chunk(stream_event("more words ") * 16)
        while True:
            writer.write(event)
            await writer.drain()

    backend.behaviour = endless_stream
    body = orjson.dumps({"model": "hostile", "messages": QUESTION, "stream": True})
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.socket() as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.connect(("127.0.0.1", gateway.port))
        client.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received:
            received += client.recv(1024)
        # From here on the client reads nothing: the gateway must let go of the backend.
        call_id = next(
            line.split(b":", 1)[1].strip().decode()
            for line in received.split(b"\r\n")
            if line.lower().startswith(b"x-plumbline-call-id:")
        )
        post = backend.posts[-1]
        backend.wait_for(lambda: post.connection in backend.closed)
        row = calls.wait(call_id)
    assert row.status_code == 504
    _serves_on(gateway, key)


def test_a_post_written_to_one_backend_is_not_sent_to_another(
    gateway: GatewayProcess, backend: HostileBackend, key: str, calls: CallReader
) -> None:
    async def swallow(_: Post, __: Reader, ___: Writer) -> bool:
        return False  # read the whole call, then hang up without a byte of answer

    backend.behaviour = swallow
    response = _chat(gateway, key, model="pair")
    assert response.status_code == 502
    assert "of model `pair`" in response.json()["error"]["message"]
    assert len(backend.posts_for(response.headers["x-request-id"])) == 1
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 502
    _serves_on(gateway, key)


def test_an_oversized_metrics_page_is_dropped_unread(
    gateway: GatewayProcess, backend: HostileBackend
) -> None:
    async def huge_metrics(path: str, writer: Writer) -> bool:
        if path != "/a/metrics":
            writer.write(whole(b"", fields=""))
            await writer.drain()
            return True
        writer.write(head(fields="Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"))
        piece = chunk(b"vllm:num_requests_running 1\n" * 512)
        try:
            for _ in range(8 * 1024 * 1024 // len(piece)):
                writer.write(piece)
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            backend.note("metrics cut")
            return False
        backend.note("metrics sent whole")
        return True

    backend.metrics_page = huge_metrics
    try:
        backend.wait_for(lambda: bool(backend.notes & {"metrics cut", "metrics sent whole"}))
    finally:
        backend.metrics_page = None
    # 8 MiB is far beyond the loopback buffers: only a reader that hung up leaves it unsent.
    assert "metrics sent whole" not in backend.notes
    assert httpx.get(f"{gateway.url}/health", timeout=10).status_code == 200
