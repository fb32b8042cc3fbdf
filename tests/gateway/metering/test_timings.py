"""Client-side phase timings from chunk arrival times."""

from __future__ import annotations

import pytest

from gateway.metering.timings import percentile, phase_timings


def test_phases_from_chunk_times() -> None:
    timings = phase_timings(10.0, [10.1, 10.12, 10.13, 10.17], 10.2)
    assert timings.ttft_ms == pytest.approx(100)
    assert timings.decode_ms == pytest.approx(70)
    assert timings.itl_mean_ms == pytest.approx(70 / 3)
    assert timings.itl_p50_ms == pytest.approx(20)
    assert timings.itl_max_ms == pytest.approx(40)
    assert timings.e2e_ms == pytest.approx(200)


def test_no_chunks_means_only_end_to_end() -> None:
    timings = phase_timings(1.0, [], 1.5)
    assert timings.ttft_ms is None
    assert timings.e2e_ms == pytest.approx(500)


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == pytest.approx(2.5)
    assert percentile([7.0], 0.95) == 7.0
