"""The overhead scenario runs end to end on all four sides and writes its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")
SIDES = ("direct to the simulator", "nginx reverse proxy", "LiteLLM proxy", "Plumbline")


def test_overhead_smoke_reports_every_side(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    text = run_smoke("bench.overhead", doc)
    assert "## Overhead: direct, nginx, LiteLLM proxy, Plumbline" in text
    for side in SIDES:
        rows = table_rows(text, side)
        # Non-streaming and streaming phases, capacity and process cost: four tables at least.
        assert len(rows) >= 4, f"{side}: {rows}"
        light = rows[0]
        assert number(light[1]) == 5 and number(light[2]) > 0, light
        assert light[-1] == "0", f"{side} had errors at the light rate: {light}"
    plumbline_cost = table_rows(text, "Plumbline")[-1]
    assert number(plumbline_cost[1]) >= 0 and "calls" in plumbline_cost[5]
    for target in ("added p50", "added p99", "max sustained", "ITL inflation", "memory flat"):
        assert any(target in line for line in text.splitlines() if line.startswith("|")), target
