"""bench.recording.recorder_rate runs a real recorder process and prints its rate and profile."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.xdist_group("bench-smoke")


def test_the_recorder_rate_is_printed_per_burst_with_its_hotspots() -> None:
    command = [sys.executable, "-m", "bench.recording.recorder_rate"]
    command += ["--records", "300", "--bursts", "2", "--warm", "50", "--variants", "3", "--profile"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    out = finished.stdout
    rates = re.findall(r"burst \d: 300 records in [\d.]+ s, .*: ([\d,]+) records per", out)
    assert len(rates) == 2 and all(int(rate.replace(",", "")) > 0 for rate in rates), out
    assert "scan_ids (plumbline/logprob_ids.py)" in out  # the profile names the scan
