"""The tracing part of the overhead scenario: off, and every call sampled with each collector."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")
SIDES = ("tracing off", "on, live collector", "on, collector down", "on, collector hung")


def test_tracing_on_and_off_are_reported_and_the_live_collector_got_every_call(
    tmp_path: Path,
) -> None:
    text = run_smoke("bench.overhead", tmp_path / "benchmarks.md", 300.0, "--tracing")
    assert "## Overhead of tracing: every call sampled, collector live, down or hung" in text
    for side in SIDES:
        plain, load, light_stream, load_stream, closed, cost, spans = table_rows(text, side)
        for row in (plain, load, light_stream, load_stream):
            assert number(row[2]) > 0 and row[-1] == "0", f"{side}: {row}"
        assert number(light_stream[-2]) >= number(light_stream[2]), "a stream outlasts its TTFT"
        assert number(closed[1]) > 0 and closed[-1] == "0", closed
        # CPU of the gateway and of its recorder were both read, over every call it recorded.
        assert number(cost[1]) == number(spans[1]) > 0, (cost, spans)
        assert number(cost[2]) > 0 and number(cost[3]) > 0, cost
    off = table_rows(text, "tracing off")
    assert number(off[0][4]) == 0 and off[0][6] == "1.00x", "off is the baseline"
    spans = {side: table_rows(text, side)[-1] for side in SIDES}
    assert spans["tracing off"][2:] == ["0", "0", "0", "0", "no spans"], spans
    live = spans["on, live collector"]
    # Every call was sampled and its span exported, none dropped, and the collector has them.
    assert number(live[2]) == number(live[1]) and live[3:] == ["0", "0", "0", "0"], live
    assert f"the live collector received {live[2]} spans" in text
    down = spans["on, collector down"]
    assert number(down[2]) == 0 and number(down[3]) + number(down[4]) == number(down[1]), down
    assert number(spans["on, collector hung"][2]) == 0
