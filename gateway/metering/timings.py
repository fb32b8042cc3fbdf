"""Client-side phase timings from the arrival times of token chunks."""

from __future__ import annotations

import itertools
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PhaseTimings:
    """TTFT, decode, inter-token latency and end-to-end time in milliseconds."""

    ttft_ms: float | None
    decode_ms: float | None
    itl_mean_ms: float | None
    itl_p50_ms: float | None
    itl_p95_ms: float | None
    itl_max_ms: float | None
    e2e_ms: float | None


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..1) of an already sorted list."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def phase_timings(t_arrival: float, chunk_times: list[float], t_done: float | None) -> PhaseTimings:
    """Derive the phases; TTFT counts from the request's arrival at the gateway."""
    e2e = (t_done - t_arrival) * 1000 if t_done is not None else None
    if not chunk_times:
        return PhaseTimings(None, None, None, None, None, None, e2e)
    ttft = (chunk_times[0] - t_arrival) * 1000
    decode = (chunk_times[-1] - chunk_times[0]) * 1000
    gaps = sorted((b - a) * 1000 for a, b in itertools.pairwise(chunk_times))
    if not gaps:
        return PhaseTimings(ttft, decode, None, None, None, None, e2e)
    return PhaseTimings(
        ttft_ms=ttft,
        decode_ms=decode,
        itl_mean_ms=sum(gaps) / len(gaps),
        itl_p50_ms=percentile(gaps, 0.50),
        itl_p95_ms=percentile(gaps, 0.95),
        itl_max_ms=gaps[-1],
        e2e_ms=e2e,
    )
