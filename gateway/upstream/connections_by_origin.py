"""ConnectionsByOrigin: the upstream client's keep-alive connections, one set per backend URL."""

from __future__ import annotations

from gateway.config import BackendLimits
from gateway.upstream.origin_connections import OriginConnections


class ConnectionsByOrigin:
    """One `OriginConnections` per backend URL, created on first use of each."""

    def __init__(self, bounds: BackendLimits | None = None) -> None:
        self._bounds = bounds if bounds is not None else BackendLimits()
        self._by_url: dict[str, OriginConnections] = {}

    def backend(self, url: str) -> OriginConnections:
        """The connections to one backend URL."""
        connections = self._by_url.get(url)
        if connections is None:
            connections = self._by_url[url] = OriginConnections(url, self._bounds)
        return connections

    def close(self) -> None:
        """Close every idle connection to every backend."""
        by_url, self._by_url = self._by_url, {}
        for connections in by_url.values():
            connections.close()
