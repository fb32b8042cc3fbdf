"""UpstreamPool: the gateway's connection pools, one per backend URL."""

from __future__ import annotations

from collections.abc import Mapping

from gateway.upstream.pool import ConnectionPool
from gateway.upstream.response import UpstreamResponse


class UpstreamPool:
    """Keep-alive connections to every backend, created on first use of each."""

    def __init__(self) -> None:
        self._pools: dict[str, ConnectionPool] = {}

    def backend(self, url: str) -> ConnectionPool:
        """The pool for one backend URL."""
        pool = self._pools.get(url)
        if pool is None:
            pool = self._pools[url] = ConnectionPool(url)
        return pool

    async def post(
        self,
        url: str,
        path: str,
        body: bytes,
        headers: Mapping[str, str],
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> UpstreamResponse:
        """POST to `path` under the backend at `url`."""
        return await self.backend(url).post(path, body, headers, connect_timeout, read_timeout)

    def close(self) -> None:
        """Close every pooled connection."""
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.close()
