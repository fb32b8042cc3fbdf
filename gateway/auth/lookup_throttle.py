"""FailedLookupThrottle: how many failed key lookups each client address may cause."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class FailedLookupThrottle:
    """A token bucket per client address, spent by lookups that found no key."""

    def __init__(
        self, per_minute: int, max_clients: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._capacity = float(per_minute)
        self._rate = per_minute / 60.0
        self._max_clients = max_clients
        self._clock = clock
        # Client address -> (tokens left, when counted); oldest first, so the bound drops those.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _tokens(self, client: str, now: float) -> float:
        tokens, at = self._buckets.get(client, (self._capacity, now))
        return min(self._capacity, tokens + (now - at) * self._rate)

    def retry_after(self, client: str | None) -> float | None:
        """Seconds until `client` may cause another failed lookup; None if it may now."""
        if client is None or client not in self._buckets:
            return None
        tokens = self._tokens(client, self._clock())
        return None if tokens >= 1.0 else (1.0 - tokens) / self._rate

    def failed(self, client: str | None) -> None:
        """Spend one of `client`'s failed lookups."""
        if client is None:
            return
        now = self._clock()
        self._buckets[client] = (max(0.0, self._tokens(client, now) - 1.0), now)
        self._buckets.move_to_end(client)
        while len(self._buckets) > self._max_clients:
            self._buckets.popitem(last=False)
