"""The vllm_serve scenario runs vLLM's own client against the real vLLM on all four sides."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

# One real vLLM at a time on the machine: the "vllm" group puts this test on the worker that
# runs tests/vllm, before (in name order) that directory starts its session server.
pytestmark = pytest.mark.xdist_group("vllm")
SIDES = ("direct to vLLM", "direct, top-5 logprobs", "nginx, top-5 logprobs", "Plumbline")
# vLLM's start-up (graph compilation) on a busy 2-CPU machine dominates the run.
TIMEOUT_S = 1200.0


@pytest.mark.timeout(TIMEOUT_S + 60)
def test_vllm_serve_smoke_reports_every_side(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    text = run_smoke("bench.vllm_serve", doc, TIMEOUT_S)
    assert "## Streams with vLLM's benchmark client" in text
    for side in SIDES:
        rows = table_rows(text, side)
        # Four metric tables and the throughput table.
        assert len(rows) == 5, f"{side}: {rows}"
        ttft, tpot, itl, e2e, throughput = rows
        for figures in (ttft, tpot, itl, e2e):
            assert 0 < number(figures[1]) <= number(figures[3]), figures
        # Every call of the smoke's one round answered, at a measured token rate.
        assert number(throughput[1]) == 4 and number(throughput[2]) == 0, throughput
        assert number(throughput[3]) > 0, throughput
    cpu = [row for row in table_rows(text, "1") if len(row) == 10]
    assert len(cpu) == 1, cpu
    sent, recorded, tokens = (number(cell) for cell in cpu[0][1:4])
    # Warm-up and measured calls, 32 tokens each, every one recorded (and the client's probe of
    # /tokenize, which the gateway records too).
    assert sent == 5 and recorded >= sent and tokens == 5 * 32, cpu
    assert number(cpu[0][4]) > 0 and number(cpu[0][6]) > 0, cpu
    assert "Idle (read for 2 s before the first round" in text
    assert "Offered: 8 requests/s x 32 tokens = 256 tokens/s" in text
    if len(os.sched_getaffinity(0)) >= 2:
        # vLLM got a CPU of its own, and /proc showed every one of its processes held to it.
        pinned = re.search(r"pinned to CPU (\d+);.* allowed CPU ([\d, ]+) as /proc", text)
        assert pinned is not None and pinned.group(1) == pinned.group(2), pinned
    for target in ("ITL p50 added", "ITL p90 added", "TTFT p50 added", "E2E p50 added"):
        assert any(line.startswith(f"| {target}") for line in text.splitlines()), target
