"""Log-scale latency histograms: mergeable across hours, teams and edges, percentiles within 2.5%.

Bucket i holds values in [BASE_MS * GROWTH**i, BASE_MS * GROWTH**(i+1)); the first also holds
everything smaller, the last everything larger. Postgres computes the same bucket (see
`bucket_sql`), so histograms built from raw rows merge with stored ones.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import ColumnElement, Integer, func
from sqlalchemy import cast as sql_cast

BASE_MS = 0.1
GROWTH = 1.05
BUCKETS = 340  # 0.1 ms to about 27 minutes

Histogram = NDArray[np.int64]


def empty() -> Histogram:
    """A histogram with no values."""
    return np.zeros(BUCKETS, dtype=np.int64)


def bucket_of(values_ms: NDArray[np.float64]) -> NDArray[np.int64]:
    """The bucket of each value."""
    scaled = np.log(np.maximum(values_ms, BASE_MS) / BASE_MS) / math.log(GROWTH)
    return np.clip(np.floor(scaled), 0, BUCKETS - 1).astype(np.int64)


def bucket_sql(column: ColumnElement[float | None]) -> ColumnElement[int]:
    """The same bucket computed by Postgres."""
    scaled = func.ln(func.greatest(column, BASE_MS) / BASE_MS) / math.log(GROWTH)
    return sql_cast(func.least(func.greatest(func.floor(scaled), 0), BUCKETS - 1), Integer)


def encode(histogram: Histogram) -> bytes:
    """Sparse storage form: the used bucket indices (uint16) then their counts (uint32)."""
    used = np.flatnonzero(histogram)
    return used.astype("<u2").tobytes() + histogram[used].astype("<u4").tobytes()


def decode(data: bytes) -> Histogram:
    """The dense histogram of a stored one."""
    histogram = empty()
    used = len(data) // 6
    indices = np.frombuffer(data, dtype="<u2", count=used)
    histogram[indices] = np.frombuffer(data, dtype="<u4", count=used, offset=2 * used)
    return histogram


def _order_statistic(histogram: Histogram, cumulative: NDArray[np.int64], k: int) -> float:
    """The k-th smallest value (from 0), placed geometrically by its rank within its bucket."""
    index = int(np.searchsorted(cumulative, k, side="right"))
    before = int(cumulative[index - 1]) if index else 0
    within = (k - before + 0.5) / int(histogram[index])
    return float(BASE_MS * GROWTH ** (index + within))


def percentile(histogram: Histogram, q: float) -> float | None:
    """The q-th quantile (0-1) interpolated between order statistics as percentile_cont does.

    Each order statistic is off by less than its bucket's width (5%), so the result is too.
    """
    total = int(histogram.sum())
    if not total:
        return None
    rank = q * (total - 1)
    cumulative = np.cumsum(histogram)
    low = _order_statistic(histogram, cumulative, int(rank))
    if rank == int(rank):
        return low
    high = _order_statistic(histogram, cumulative, int(rank) + 1)
    return low + (high - low) * (rank - int(rank))
