"""GatewayClock: the time one call spends in the gateway itself, for its record and header."""

from __future__ import annotations

from time import perf_counter


class GatewayClock:
    """Arrival until the upstream request, plus the processing of the response after it."""

    __slots__ = ("processing_s", "t0", "upstream_started")

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.upstream_started: float | None = None
        self.processing_s = 0.0

    @property
    def overhead_s(self) -> float:
        """Time spent in the gateway so far."""
        end = self.upstream_started if self.upstream_started is not None else perf_counter()
        return (end - self.t0) + self.processing_s
