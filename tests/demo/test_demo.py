"""`plumbline demo` (what `make demo` runs) tells the whole story and exits cleanly."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plumbline.child_process import plumbline_command

pytestmark = pytest.mark.xdist_group("demo")


def test_the_demo_runs_end_to_end(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLUMBLINE_")}
    done = subprocess.run(
        plumbline_command(
            "demo", "--no-keep-running", "--directory", str(tmp_path), "--calls", "60"
        ),
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        timeout=600,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "sent 60 calls with the official OpenAI SDK" in out
    assert "The answer hinged on token" in out and "' 12'" in out
    assert '" 12" p=0.46 vs " 24" p=0.41 (near tie)' in out
    assert "FIRE" in out and "rule question:indemnity-cap" in out
    assert "/dashboard" in out and "team key (legal): " in out
    assert "demo finished" in out
