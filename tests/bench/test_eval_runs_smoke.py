"""The evals scenario runs a suite on real workers and compares it with the backend limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_eval_runs_smoke_times_one_and_two_workers(tmp_path: Path) -> None:
    text = run_smoke("bench.eval_runs", tmp_path / "benchmarks.md")
    assert "## Evals: suite wall time on workers" in text
    one, two = table_rows(text, "1"), table_rows(text, "2")
    # The fixed-capacity table and the wide-backend table each have a row per worker count.
    assert len(one) == 2 and len(two) == 2
    for row in (*one, *two):
        assert row[1] == "8 of 8", row
    fixed_one = one[0]
    # Tokens decoded, wall time, and the backend-only limit they imply.
    assert number(fixed_one[2]) > 0 and number(fixed_one[3]) > number(fixed_one[5]) > 0, fixed_one
    assert "two workers ≥ 1.8 x one" in text
    # The figure a 2-core machine can judge: samples per CPU-second, two workers against one.
    per_cpu = table_rows(text, "samples per CPU-second (all of these)")
    assert len(per_cpu) == 1 and all(number(cell) > 0 for cell in per_cpu[0][1:]), per_cpu
    assert "per CPU-second of the whole stack, two workers ≥ 0.9 x one" in text
