"""The governance part of the overhead scenario: the same load with the checks off and on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")
SIDES = ("governance off", "governance on")


def test_governance_off_and_on_are_reported_and_the_on_side_was_charged(tmp_path: Path) -> None:
    text = run_smoke("bench.overhead", tmp_path / "benchmarks.md", 300.0, "--governance")
    assert "## Overhead of governance: scopes, model access, budgets, shedding" in text
    for side in SIDES:
        *phases, cost = table_rows(text, side)
        assert [row[1] for row in phases] == ["plain 5/s", "plain 20/s", "stream 2/s (TTFT)"]
        for row in phases:
            # Nothing refused: every check passed every call, on both sides.
            assert number(row[2]) > 0 and number(row[3]) >= number(row[2]), row
            assert row[-1] == "0", f"{side}: {row}"
        # CPU of the gateway and of its recorder were both read, over every call sent.
        assert number(cost[1]) > 0 and number(cost[2]) > 0 and number(cost[3]) > 0, cost
    off = table_rows(text, "governance off")
    assert all(number(row[4]) == number(row[5]) == 0 for row in off[:3]), "off is the baseline"
    (verdict,) = [
        r for r in table_rows(text, "added p50 < 0.05 ms with budgets and model access on")
    ]
    assert verdict[1].endswith("ms at 5 rps (median over rounds of on - off)"), verdict
    assert verdict[2] in ("met", "**missed**"), verdict
    checks = {
        name: table_rows(text, name)[0]
        for name in ("no budget (any store)", "budgets, redis store")
    }
    assert all(number(row[1]) > 0 and number(row[2]) >= number(row[1]) for row in checks.values())
    # The on side's key and team budgets, day and month, were each charged the run's spend.
    spent = [table_rows(text, scope) for scope in ("team", "key")]
    assert [[row[1] for row in rows] for rows in spent] == [["day", "month"]] * 2, spent
    assert len({row[2] for rows in spent for row in rows}) == 1 and number(spent[0][0][2]) > 0
