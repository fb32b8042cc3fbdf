"""A client that reads a few events of a stream and hangs up, noting the wall-clock moment.

Raw asyncio streams rather than an HTTP library: the test needs to know exactly when the socket
was closed, and a library may close it later (on garbage collection, or back in its pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(slots=True)
class HangUp:
    """One client that left mid-stream."""

    request_id: str
    status: int | None = None
    call_id: str | None = None
    events_seen: int = 0
    hung_up_at: float = 0.0  # Unix seconds, the moment before the socket was closed
    error: str | None = None


def _header(head: bytes, name: bytes) -> str | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


async def read_then_hang_up(
    base_url: str, key: str, request_id: str, payload: dict[str, Any], events: int
) -> HangUp:
    """POST a streamed chat call, read `events` SSE events, then close the connection."""
    outcome = HangUp(request_id)
    host, port = base_url.removeprefix("http://").split(":")
    body = orjson.dumps(payload)
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"X-Request-Id: {request_id}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        outcome.status = int(head.split(b" ", 2)[1])
        outcome.call_id = _header(head, b"x-plumbline-call-id")
        received = b""
        while outcome.events_seen < events:
            data = await reader.read(65536)
            if not data:
                outcome.error = "the server ended the stream first"
                break
            received += data
            outcome.events_seen = received.count(b"data: ")
    except (OSError, asyncio.IncompleteReadError) as error:
        outcome.error = f"{type(error).__name__}: {error}"
    finally:
        outcome.hung_up_at = time.time()
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    return outcome
