"""UpstreamPool: the gateway's connection pools, one per backend URL."""

from __future__ import annotations

from gateway.config import BackendLimits
from gateway.upstream.pool import ConnectionPool


class UpstreamPool:
    """Keep-alive connections to every backend, created on first use of each."""

    def __init__(self, bounds: BackendLimits | None = None) -> None:
        self._bounds = bounds if bounds is not None else BackendLimits()
        self._pools: dict[str, ConnectionPool] = {}

    def backend(self, url: str) -> ConnectionPool:
        """The pool for one backend URL."""
        pool = self._pools.get(url)
        if pool is None:
            pool = self._pools[url] = ConnectionPool(url, self._bounds)
        return pool

    def close(self) -> None:
        """Close every pooled connection."""
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.close()
