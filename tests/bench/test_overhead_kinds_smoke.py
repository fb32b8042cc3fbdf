"""The call-kind part of the overhead scenario: Responses measured, embeddings skipped on a 404."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.smoke import number, run_smoke, table_rows

pytestmark = pytest.mark.xdist_group("bench-smoke")
SIDES = ("direct to the simulator", "nginx reverse proxy", "Plumbline")


def test_responses_added_latency_is_reported_and_embeddings_skip_with_a_reason(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "benchmarks.md"
    text = run_smoke("bench.overhead", doc, 240.0, "--call-kinds", "responses,embeddings")
    assert "## Overhead by call kind: Responses and embeddings against direct" in text
    for kind in ("Responses, plain", "Responses, streamed"):
        rows = table_rows(text, kind)
        assert [row[1] for row in rows] == list(SIDES), rows
        for row in rows:
            assert number(row[3]) > 0 and row[-1] == "0", row
        direct = rows[0]
        assert number(direct[5]) == 0 and number(direct[7]) == 1, direct
    streamed = table_rows(text, "Responses, streamed")
    assert all(number(row[8]) > 0 for row in streamed), "streamed calls time their TTFT"
    # This build has no /v1/embeddings route: the case is skipped, saying why, not failed.
    (embeddings,) = table_rows(text, "embeddings")
    assert embeddings[1].startswith("skipped: the gateway answers 404 for /v1/embeddings")
