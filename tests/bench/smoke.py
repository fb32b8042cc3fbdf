"""Run a benchmark scenario in smoke mode as its own process, recording into a scratch doc."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_smoke(module: str, doc: Path, timeout: float = 240.0, *args: str) -> str:
    """`python -m <module> --smoke --doc <doc> [args]`; the doc's text afterwards."""
    result = subprocess.run(
        [sys.executable, "-m", module, "--smoke", "--doc", str(doc), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, (
        f"{module} failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    )
    return doc.read_text()


def table_rows(text: str, first_cell: str) -> list[list[str]]:
    """Cells of every markdown table row whose first cell is `first_cell`."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            rows.append(cells)
    return rows


def number(cell: str) -> float:
    """A figure as the reports print it (thousands separators, an `x` suffix, a `≥ `)."""
    return float(cell.replace(",", "").removesuffix("x").removeprefix("≥ ").strip())
