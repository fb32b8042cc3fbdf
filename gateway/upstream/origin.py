"""Origin: a backend URL taken apart once, into what connecting and requests need."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a backend listens and the path prefix its endpoints live under."""

    url: str
    host: str
    port: int
    prefix: str
    host_header: str
    ssl: ssl.SSLContext | None

    @property
    def address(self) -> str:
        """host:port, for messages."""
        return f"{self.host}:{self.port}"


def parse_origin(url: str) -> Origin:
    """Split an http(s) backend URL; raise ValueError for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS:
        raise ValueError(f"backend URL {url!r} is not http:// or https://")
    if not parts.hostname:
        raise ValueError(f"backend URL {url!r} names no host")
    if parts.query or parts.fragment:
        raise ValueError(f"backend URL {url!r} has a query or fragment")
    return Origin(
        url=url,
        host=parts.hostname,
        port=parts.port or DEFAULT_PORTS[parts.scheme],
        prefix=parts.path.rstrip("/"),
        host_header=parts.netloc.rpartition("@")[2],
        ssl=ssl.create_default_context() if parts.scheme == "https" else None,
    )
