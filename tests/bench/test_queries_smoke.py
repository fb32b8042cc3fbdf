"""The queries scenario generates calls, times the usage endpoint and the dashboard panels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_queries_smoke_times_usage_and_panels(tmp_path: Path) -> None:
    text = run_smoke("bench.queries", tmp_path / "benchmarks.md")
    assert "## Queries: usage endpoint and panels" in text
    raw, rolled = table_rows(text, "admin key, 30 days")  # before and after the rollups
    # 4 models x 12 features (each feature one call kind): every pair occurs among 6,000 calls.
    assert number(raw[1]) == number(rolled[1]) == 48, (raw, rolled)
    assert "days rolled up in" in text
    panel_lines = [line for line in text.splitlines() if line.startswith("| Plumbline / ")]
    assert len(panel_lines) >= 15
    assert any("ITL vs concurrency" in line for line in panel_lines)
