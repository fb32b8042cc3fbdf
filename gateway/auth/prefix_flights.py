"""PrefixFlights: at most one database lookup per key prefix at a time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PrefixFlights:
    """Lookups of one prefix take turns; a turn ends when its lookup's verdict is cached."""

    def __init__(self) -> None:
        # Prefix -> the lookup under way; removed when it ends, so bounded by lookups in flight.
        self._under_way: dict[str, asyncio.Future[None]] = {}
        self.joined = 0

    def busy(self, prefix: str) -> bool:
        """Whether a lookup of `prefix` is under way."""
        return prefix in self._under_way

    async def wait(self, prefix: str) -> None:
        """Wait for the lookup of `prefix` under way, if any (its verdict may serve this one)."""
        flight = self._under_way.get(prefix)
        if flight is not None:
            self.joined += 1
            await asyncio.shield(flight)

    @asynccontextmanager
    async def turn(self, prefix: str) -> AsyncIterator[None]:
        """Hold `prefix` for one lookup; call only when `busy(prefix)` is False."""
        flight = asyncio.get_running_loop().create_future()
        self._under_way[prefix] = flight
        try:
            yield
        finally:
            del self._under_way[prefix]
            flight.set_result(None)
