"""The backend faults of the 10,000-call test: what each injects and what the client must see."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STALL_S = 25.0  # far beyond the gateway's read timeout in the test (5 s)
CONCURRENCY = 64
# Stalled calls only wait (for the read timeout): many at once keep the phase short.
STALL_CONCURRENCY = 200
MAX_CONCURRENCY = max(CONCURRENCY, STALL_CONCURRENCY)


@dataclass(frozen=True, slots=True)
class FaultPhase:
    """One kind of fault, injected into every call of the phase."""

    name: str
    faults: dict[str, Any]
    stream: bool
    calls: int
    # Statuses the client may see (HTTP status, or the code of a stream's error event); the
    # call's record must carry the same one.
    statuses: frozenset[int]
    # Only the first backend is faulty: calls it fails before sending anything are retried.
    spare_healthy: bool = False
    concurrency: int = CONCURRENCY


PHASES = (
    # Both backends answer 500: the gateway tries the other, then gives up with a 502.
    FaultPhase("error_500", {"error": {"rate": 1.0, "status": 500}}, False, 1500, frozenset({502})),
    FaultPhase(
        "error_mid_stream",
        {"error": {"rate": 1.0, "status": 500, "after_tokens": 2}},
        True,
        1500,
        frozenset({500}),
    ),
    FaultPhase(
        "stall_first_byte",
        {"stall_first_byte": {"rate": 1.0, "seconds": STALL_S}},
        False,
        1000,
        frozenset({504}),
        concurrency=STALL_CONCURRENCY,
    ),
    FaultPhase(
        "stall_mid_stream",
        {"stall_mid_stream": {"rate": 1.0, "after_tokens": 2, "seconds": STALL_S}},
        True,
        1000,
        frozenset({504}),
        concurrency=STALL_CONCURRENCY,
    ),
    FaultPhase(
        "reset_mid_stream",
        {"close_mid_stream": {"rate": 1.0, "after_tokens": 2}},
        True,
        1000,
        frozenset({502}),
    ),
    FaultPhase(
        "reset_mid_body",
        {"close_mid_stream": {"rate": 1.0, "after_tokens": 2}},
        False,
        500,
        frozenset({502}),
    ),
    FaultPhase("garbage_body", {"garbage": {"rate": 1.0}}, False, 1000, frozenset({502})),
    FaultPhase(
        "garbage_mid_stream",
        {"garbage": {"rate": 1.0, "after_tokens": 2}},
        True,
        1000,
        frozenset({502}),
    ),
    # vLLM's engine-dead 500 until the health checks take both out, then "no healthy backend".
    FaultPhase("engine_dead", {"engine_dead": True}, False, 500, frozenset({500, 502, 503})),
    FaultPhase(
        "retry_on_spare",
        {"error": {"rate": 1.0, "status": 500}},
        False,
        1000,
        frozenset({200}),
        spare_healthy=True,
    ),
)
