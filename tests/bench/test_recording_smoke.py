"""The recording scenario drives the LogSink, measures storage and replays a backlog."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_recording_smoke_reports_rate_storage_and_replay(tmp_path: Path) -> None:
    text = run_smoke("bench.recording", tmp_path / "benchmarks.md")
    assert "## Recording: the log sink" in text
    for kind in ("with logprobs", "without logprobs"):
        (row,) = table_rows(text, kind)
        assert number(row[2]) > 0, row
    per_token = re.search(r"`call_logprobs` ([0-9.]+) bytes per logged token", text)
    assert per_token is not None and 10 < float(per_token.group(1)) < 2000
    assert re.search(r"300 records \(200 tokens, top-5 logprobs\) spooled", text)
    assert "Replay alone:" in text and "Replay while live traffic" in text
    assert "log sink ≥ 10,000 records/s with logprobs" in text
    (v3,) = table_rows(text, "v3 (vocabulary ids)")
    assert 5 < number(v3[4]) < 40, v3  # bytes per logged token
    assert "≤ 24 bytes per logged token with top-5 (v3)" in text
    (scan,) = table_rows(text, "scan")
    assert number(scan[1]) > 0
