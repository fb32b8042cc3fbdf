"""Reduce a phase's samples to the figures reports quote (milliseconds)."""

from __future__ import annotations

from bench.harness.load import Sample
from bench.harness.stats import percentile


def summarise(samples: list[Sample]) -> dict[str, float]:
    """Count, errors, latency, stream TTFT and gap percentiles, and the client's own lag."""
    ok = [s for s in samples if s.status == 200]
    latencies = [s.latency for s in ok]
    ttfts = [s.ttft for s in ok if s.ttft is not None]
    gaps = [g for s in ok for g in s.gaps]
    lags = [s.lag for s in samples]
    return {
        "n": len(samples),
        "errors": len(samples) - len(ok),
        "p50": percentile(latencies, 0.5) * 1000,
        "p99": percentile(latencies, 0.99) * 1000,
        "ttft_p50": percentile(ttfts, 0.5) * 1000,
        "ttft_p99": percentile(ttfts, 0.99) * 1000,
        "itl_p50": percentile(gaps, 0.5) * 1000,
        "itl_p99": percentile(gaps, 0.99) * 1000,
        "lag_p99": percentile(lags, 0.99) * 1000,
    }
