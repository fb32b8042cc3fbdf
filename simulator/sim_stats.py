"""Counters the /_sim/stats endpoint reports: requests received, in flight, done, cancelled."""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from typing import Any

TIMELINES_KEPT = 2000
# Enough for a test of thousands of hang-ups to read every one back.
CANCELLATIONS_KEPT = 5000


class SimStats:
    """Request-level bookkeeping of the generation endpoints."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.reset()

    def reset(self) -> None:
        """Zero every counter except what is in flight right now."""
        self.received = 0
        self.completed = 0
        self.cancelled = 0
        self.rejected = 0
        self.faults: Counter[str] = Counter()
        self.cancellations: deque[dict[str, Any]] = deque(maxlen=CANCELLATIONS_KEPT)
        self.timelines: OrderedDict[str, list[float]] = OrderedDict()
        # The vLLM `priority` each request came with, so a test can check what a proxy sent.
        self.priorities: OrderedDict[str, int] = OrderedDict()

    def record_priority(self, response_id: str, priority: int) -> None:
        """The `priority` field of the request answered as `response_id`."""
        self.priorities[response_id] = priority
        if len(self.priorities) > TIMELINES_KEPT:
            self.priorities.popitem(last=False)

    def record_token_write(self, response_id: str, wall_time: float) -> None:
        """A write carrying tokens left for the client at `wall_time` (for metering checks)."""
        times = self.timelines.get(response_id)
        if times is None:
            times = self.timelines[response_id] = []
            if len(self.timelines) > TIMELINES_KEPT:
                self.timelines.popitem(last=False)
        times.append(wall_time)

    def timeline(self, response_id: str) -> dict[str, Any] | None:
        """When the response's token writes were sent (Unix seconds), and its `priority`."""
        times = self.timelines.get(response_id)
        priority = self.priorities.get(response_id)
        if times is None and priority is None:
            return None
        return {"response_id": response_id, "token_writes": list(times or ()), "priority": priority}

    def record_cancel(self, request_id: str, disconnected_at: float, cancelled_at: float) -> None:
        """The client went away and the request was cancelled at `cancelled_at`."""
        self.cancelled += 1
        self.cancellations.append(
            {
                "request_id": request_id,
                "disconnect_to_cancel_ms": (cancelled_at - disconnected_at) * 1000.0,
                # Wall clock, so a client on the same machine can time its hang-up to here.
                "cancelled_at_unix": time.time(),
            }
        )

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready view."""
        latencies = [c["disconnect_to_cancel_ms"] for c in self.cancellations]
        return {
            "requests_received": self.received,
            "in_flight": self.in_flight,
            "completed": self.completed,
            "cancelled": self.cancelled,
            "rejected": self.rejected,
            "faults_injected": dict(self.faults),
            "cancellations": list(self.cancellations),
            "max_disconnect_to_cancel_ms": max(latencies, default=None),
        }
