"""Small ASGI primitives for the proxy: headers, bounded body reads, JSON replies."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from gateway.errors import GatewayError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def header_map(scope: Scope) -> dict[bytes, bytes]:
    """Request headers by lower-case name (the last value wins)."""
    return dict(scope["headers"])


def header_text(headers: dict[bytes, bytes], name: bytes, limit: int = 256) -> str | None:
    """A header as text, bounded in length; None when absent or not decodable."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        text = value.decode("latin-1")[:limit].strip()
    except UnicodeDecodeError:
        return None
    return text or None


async def _read_all(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError("client went away while sending the body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise GatewayError(413, f"Request body exceeds the gateway's limit of {limit} bytes.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def read_body(
    receive: Receive, headers: dict[bytes, bytes], limit: int, timeout: float
) -> bytes:
    """The whole request body, refusing bodies over `limit` and senders slower than `timeout`."""
    declared = headers.get(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise GatewayError(413, f"Request body exceeds the gateway's limit of {limit} bytes.")
    try:
        async with asyncio.timeout(timeout):
            return await _read_all(receive, limit)
    except TimeoutError:
        raise GatewayError(408, f"The request body did not arrive within {timeout:g} s.") from None


async def send_bytes(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    """Send a complete response."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
