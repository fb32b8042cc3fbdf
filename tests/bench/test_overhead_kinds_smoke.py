"""The call-kind part of the overhead scenario: Responses and embeddings (or why it skipped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.proxy.call_kinds.served import served_kinds
from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")
SIDES = ("direct to the simulator", "nginx reverse proxy", "Plumbline")


def test_added_latency_per_call_kind_is_reported_or_its_skip_explained(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    text = run_smoke("bench.overhead", doc, 240.0, "--call-kinds", "responses,embeddings")
    assert "## Overhead by call kind: Responses and embeddings against direct" in text
    proxied = "/v1/embeddings" in {kind.path for kind in served_kinds()}
    measured = ["Responses, plain", "Responses, streamed"] + (["embeddings"] if proxied else [])
    for kind in measured:
        rows = table_rows(text, kind)
        assert [row[1] for row in rows] == list(SIDES), rows
        for row in rows:
            assert number(row[3]) > 0 and row[-1] == "0", row
        direct = rows[0]
        assert number(direct[5]) == 0 and number(direct[7]) == 1, direct
    streamed = table_rows(text, "Responses, streamed")
    assert all(number(row[8]) > 0 for row in streamed), "streamed calls time their TTFT"
    if not proxied:
        # A build without the embeddings route skips the case, saying why, and does not fail.
        (embeddings,) = table_rows(text, "embeddings")
        assert embeddings[1].startswith("skipped: the gateway answers 404 for /v1/embeddings")
