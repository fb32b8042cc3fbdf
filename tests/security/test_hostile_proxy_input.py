"""Hostile input at the proxy endpoints of a real gateway: never a 500, always OpenAI's shape.

Hypothesis generates bodies (invalid JSON and UTF-8, wrong types, huge and negative numbers,
deep nesting) and headers; the special cases (100 MB bodies, slow bodies, headers with line
breaks) are sent by hand over raw sockets. The last test checks that nothing left a 500 in the
calls table and that /metrics kept bounded labels and no prompt text.
Figures: PLUMBLINE_HOSTILE_REPORT=path PLUMBLINE_FUZZ_EXAMPLES=N (see docs/reliability.md).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from gateway.metrics import ERROR_TYPES
from gateway.proxy.call_kinds.served import served_kinds
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call
from tests.security.hostile_inputs import HEADERS, RAW_BODIES, encode, openai_requests
from tests.security.stack import SecurityStack, security_stack
from tests.security.tally import Tally, examples
from tests.support.calls import CallReader
from tests.support.sink_written import wait_until_sink_written

pytestmark = pytest.mark.xdist_group("security-hostile-proxy")
CANARY = "PROMPT-CANARY-5f1e"
FUZZ = settings(
    max_examples=examples(150),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ENDPOINTS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    config = {"limits": {"body_read_timeout_s": 2.0}}
    with security_stack("postgres", tmp_path_factory.mktemp("hostile"), config=config) as running:
        yield running


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    found = Tally()
    yield found
    found.write("proxy")
    print({t: found.tried(t) for t in found.statuses})


@pytest.fixture(scope="module")
def client(stack: SecurityStack) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {stack.keys['alpha']}"}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=60) as http:
        yield http


@pytest.mark.parametrize("kind", sorted(ENDPOINTS))
def test_request_shaped_bodies_with_hostile_values(
    client: httpx.Client, tally: Tally, kind: str
) -> None:
    @FUZZ
    @given(body=openai_requests(kind == "chat"))
    def one(body: dict[str, object]) -> None:
        content = encode(body)
        response = client.post(ENDPOINTS[kind], content=content)
        tally.check(f"proxy {kind}: request-shaped JSON", response, content)

    one()
    assert not tally.problems, tally.problems[:5]


def test_raw_bodies(client: httpx.Client, tally: Tally) -> None:
    @FUZZ
    @given(content=RAW_BODIES)
    def one(content: bytes) -> None:
        response = client.post(ENDPOINTS["chat"], content=content)
        tally.check("proxy chat: raw bytes, JSON, deep nesting", response, content)

    one()
    assert not tally.problems, tally.problems[:5]


def test_hostile_header_values(client: httpx.Client, tally: Tally) -> None:
    body = encode(
        {"model": "tiny", "messages": [{"role": "user", "content": CANARY}], "max_tokens": 2}
    )

    @FUZZ
    @given(headers=HEADERS)
    def one(headers: dict[str, str]) -> None:
        raw = {name: value.encode("latin-1") for name, value in headers.items()}
        response = client.post(ENDPOINTS["chat"], content=body, headers=raw)
        tally.check("proxy chat: header values", response, headers)
        echoed = next(v for k, v in response.headers.raw if k.lower() == b"x-request-id")
        sent = headers.get("X-Request-Id", "")[:128].strip().encode("latin-1")
        assert echoed == sent if sent else len(echoed) == 32, (sent, echoed)  # else a fresh id

    one()
    assert not tally.problems, tally.problems[:5]


def _address(stack: SecurityStack) -> tuple[str, int]:
    host, port = stack.url.removeprefix("http://").split(":")
    return host, int(port)


def _head(stack: SecurityStack, extra: bytes) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n"
        b"Authorization: Bearer " + stack.keys["alpha"].encode() + b"\r\n"
        b"Content-Type: application/json\r\n" + extra + b"\r\n"
    )


def _response(sock: socket.socket) -> httpx.Response:
    """Read one HTTP response (with Content-Length) from a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(": ", 1) for line in lines[1:])
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return httpx.Response(status, headers=headers, content=body)


def test_a_declared_100_mb_body_is_refused_before_it_is_sent(
    stack: SecurityStack, tally: Tally
) -> None:
    with socket.create_connection(_address(stack), timeout=30) as sock:
        sock.sendall(_head(stack, b"Content-Length: 104857600\r\n"))
        sock.sendall(b'{"model": "tiny", "messages": "' + b"a" * 65536)
        response = _response(sock)
    tally.check("proxy chat: 100 MB bodies", response)
    assert response.status_code == 413


def test_a_chunked_100_mb_body_is_cut_off_at_the_limit(stack: SecurityStack, tally: Tally) -> None:
    sent = 0
    with socket.create_connection(_address(stack), timeout=30) as sock:
        sock.sendall(_head(stack, b"Transfer-Encoding: chunked\r\n"))
        chunk = b"a" * (1 << 20)
        framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"

        def send_all() -> None:
            nonlocal sent
            try:
                for _ in range(100):
                    sock.sendall(framed)
                    sent += len(chunk)
            except OSError:
                pass  # the gateway answered and closed: exactly what should happen

        sender = threading.Thread(target=send_all, daemon=True)
        sender.start()
        response = _response(sock)
        sender.join(30)
    tally.check("proxy chat: 100 MB bodies", response)
    assert response.status_code == 413
    assert "limit of 8388608 bytes" in response.json()["error"]["message"]


def test_a_slowloris_body_gets_a_408(stack: SecurityStack, tally: Tally) -> None:
    with socket.create_connection(_address(stack), timeout=30) as sock:
        sock.sendall(_head(stack, b"Content-Length: 1000\r\n"))
        started = time.monotonic()
        sock.settimeout(0.5)
        response = None
        while response is None and time.monotonic() - started < 20:
            try:
                sock.sendall(b" ")  # a byte every half second: never done in time
                sock.recv(1, socket.MSG_PEEK)
                sock.settimeout(10)
                response = _response(sock)
            except TimeoutError:
                continue
    assert response is not None, "the gateway kept waiting for a slow body"
    tally.check("proxy chat: slow bodies", response)
    assert response.status_code == 408
    assert "did not arrive within 2 s" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "header",
    [
        b"X-Plumbline-Feature: a\nInjected: yes\r\n",
        b"X-Plumbline-Feature: a\r\n folded: yes\r\n",
        b"X-Request-Id: a\rb\r\n",
        b"X-Request-Id: a\x00b\r\n",
        b"X-Plumbline-User: a\x01b\r\n",
    ],
)
def test_headers_with_line_breaks_never_reach_the_app(
    stack: SecurityStack, tally: Tally, header: bytes
) -> None:
    """The HTTP parser (httptools) refuses them with its own plain 400, before any app code."""
    body = b'{"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}'
    with socket.create_connection(_address(stack), timeout=30) as sock:
        sock.sendall(_head(stack, header + f"Content-Length: {len(body)}\r\n".encode()) + body)
        response = _response(sock)
    tally.count("proxy chat: headers with line breaks (HTTP parser)", response.status_code)
    assert response.status_code == 400 and b"Injected" not in response.content
    assert "injected" not in response.headers and "folded" not in response.headers


def test_a_nul_in_any_stored_string_neither_fails_the_batch_nor_a_read(
    stack: SecurityStack, client: httpx.Client, tally: Tally
) -> None:
    """Postgres refuses NUL in text: one such call must not fail every call batched with it."""
    poisoned = client.post(
        ENDPOINTS["chat"],
        content=b'{"model": "a\\u0000b", "messages": []}',
        headers={"X-Plumbline-Feature": "chat"},
    )
    tally.check("proxy chat: NUL in stored strings", poisoned)
    fine = client.post(ENDPOINTS["chat"], content=encode({"model": "tiny", "messages": []}))
    reader = CallReader(stack.database_url)
    row = reader.wait(poisoned.headers["x-plumbline-call-id"])
    reader.wait(fine.headers["x-plumbline-call-id"])
    reader.close()
    assert row.model == "a\ufffdb"
    assert httpx.get(f"{stack.url}/health").json()["database"] == "up"
    for query in ("feature=%00", "model=a%00b", "status=%00", "source=%00", "endpoint=%00"):
        read = client.get(f"/api/calls?{query}")
        tally.check("read API: NUL in parameters", read, query)
        assert read.status_code in (200, 400), read.text


def test_nothing_left_a_500_and_metrics_labels_stay_bounded(
    stack: SecurityStack, client: httpx.Client, tally: Tally
) -> None:
    assert client.post(ENDPOINTS["chat"], content=b'{"model": "tiny"}').status_code < 500
    wait_until_sink_written(stack.url)  # every call above answered, so handed to the sink
    engine = create_db_engine(stack.database_url)
    with make_session_factory(engine)() as session:
        server_errors = session.scalar(
            select(func.count()).select_from(Call).where(Call.status_code >= 500)
        )
        recorded = session.scalar(select(func.count()).select_from(Call))
    engine.dispose()
    assert server_errors == 0
    assert recorded and recorded >= sum(tally.tried(t) for t in tally.statuses) * 0.9

    text = httpx.get(f"{stack.url}/metrics").text
    assert CANARY not in text
    allowed = {
        "model": {"tiny", "unknown"},
        "backend": {stack.backend_url, "none"},
        "team": {"platform", "alpha", "beta", "none"},
        "feature": {"chat", "search", "eval", "other", "none"},
        "error_type": set(ERROR_TYPES),
        "gen_ai_request_model": {"tiny", "unknown"},
        "endpoint": {kind.path for kind in served_kinds()} | {"other"},
    }
    series = 0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series += 1
            for label, value in sample.labels.items():
                if label in allowed:
                    assert value in allowed[label], (sample.name, label, value)
                elif label == "status":
                    assert value == "cancelled" or value.isdigit(), (sample.name, value)
    assert series < 5000
    assert orjson.dumps(tally.summary())
