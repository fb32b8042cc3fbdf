"""One HTTP/1.1 exchange over a plain socket, for bodies no client library would send."""

from __future__ import annotations

import socket
from dataclasses import dataclass

import orjson

# Only a safety net for a hung gateway; nothing waits on it in a passing test.
SOCKET_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RawReply:
    """Status, lower-case headers and body of one response."""

    status: int
    headers: dict[str, str]
    body: bytes

    def error(self) -> dict[str, object]:
        """The OpenAI-shaped error of the body (fails if it is not one)."""
        error = orjson.loads(self.body)["error"]
        assert set(error) == {"message", "type", "param", "code"}
        return dict(error)


def exchange(url: str, head: bytes, body: bytes = b"") -> RawReply:
    """Send `head` and `body` to the gateway at `url`; read the whole reply."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=SOCKET_TIMEOUT_S) as sock:
        sock.sendall(head + body)
        return read_reply(sock)


def read_reply(sock: socket.socket) -> RawReply:
    """Read one whole Content-Length-framed reply, however the packets split it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed before a reply: {data!r}"
        data += chunk
    raw_head, rest = data.split(b"\r\n\r\n", 1)
    lines = raw_head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "the connection closed inside the reply"
        rest += chunk
    return RawReply(int(lines[0].split(" ")[1]), headers, rest[:length])


def post_head(path: str, key: str, content_type: str, length: int | None) -> bytes:
    """A POST head; chunked when `length` is None."""
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"POST {path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: {content_type}\r\n{framing}\r\n\r\n"
    ).encode()


def chunked(*pieces: bytes, end: bool = True) -> bytes:
    """`pieces` in chunked framing, with the last chunk unless `end` is false."""
    out = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in pieces if p)
    return out + (b"0\r\n\r\n" if end else b"")
