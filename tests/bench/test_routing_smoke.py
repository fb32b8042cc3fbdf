"""The routing scenario runs both policies over simulator backends and reports their figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_routing_smoke_compares_affinity_with_least_in_flight(tmp_path: Path) -> None:
    text = run_smoke("bench.routing", tmp_path / "benchmarks.md")
    assert "## Routing over a fleet: prefix affinity against least-in-flight" in text
    rows = {policy: table_rows(text, policy) for policy in ("least_in_flight", "prefix_affinity")}
    for policy, found in rows.items():
        assert len(found) == 1, policy
        row = found[0]
        # Every call answered, some prompt tokens found cached, TTFT measured, three shares.
        assert number(row[1]) == 24 and number(row[2]) == 0, row
        assert 0 < number(row[3].removesuffix("%")) <= 100, row
        assert 0 < number(row[4]) <= number(row[5]), row
        assert len(row[6].split(" / ")) == 3, row
    assert "prefix-cache hit rate, affinity / least-in-flight" in text
