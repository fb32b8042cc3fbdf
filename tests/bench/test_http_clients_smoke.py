"""The HTTP-clients scenario measures both libraries on every workload and writes its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_http_clients_smoke_reports_both_libraries_on_every_workload(tmp_path: Path) -> None:
    text = run_smoke("bench.http_clients", tmp_path / "benchmarks.md")
    assert "## HTTP clients: aiohttp and httpx off the hot path" in text
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ") and ("| aiohttp |" in line or "| httpx |" in line)
    ]
    workloads = {row[0] for row in rows}
    assert len(workloads) == 3 and len(rows) == 6, rows
    for row in rows:
        # CPU per call, calls per second and wall time per call were all measured.
        assert number(row[2]) > 0 and number(row[3]) > 0 and number(row[4]) > 0, row
