"""Response times of GET /api/usage over windows of the generated traffic."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from bench.harness.stats import percentile


@dataclass(frozen=True)
class Timed:
    """One query repeated: its name, p50 and p95 in ms, and the rows it returned."""

    name: str
    p50_ms: float
    p95_ms: float
    rows: int
    sql: bytes = b""


WINDOWS = {"1 hour": timedelta(hours=1), "24 hours (default)": None, "7 days": timedelta(days=7)}
WINDOWS["30 days"] = timedelta(days=30)


def time_usage(gateway_url: str, keys: dict[str, str], repeats: int, *, expect: str) -> list[Timed]:
    """Every window for every caller (admin: all teams; a team key: its own calls).

    `expect`: how the endpoint must say it computed percentiles ("exact" before the rollups
    exist; "histogram" once they do, for every window longer than the ragged edges).
    """
    found = []
    with httpx.Client(base_url=gateway_url, timeout=600) as client:
        for caller, key in keys.items():
            headers = {"Authorization": f"Bearer {key}"}
            for window, span in WINDOWS.items():
                params = {}
                if span is not None:
                    now = datetime.now(UTC)
                    params = {"since": (now - span).isoformat(), "until": now.isoformat()}
                times, rows = [], 0
                for _ in range(repeats):
                    started = time.perf_counter()
                    response = client.get("/api/usage", params=params, headers=headers)
                    times.append((time.perf_counter() - started) * 1000)
                    response.raise_for_status()
                    body = response.json()
                    rows = len(body["data"])
                    if span is None or span > timedelta(hours=2) or expect == "exact":
                        assert body["percentiles"] == expect, (window, body["percentiles"])
                found.append(
                    Timed(
                        f"{caller}, {window}",
                        percentile(times, 0.5),
                        percentile(times, 0.95),
                        rows,
                    )
                )
                print(
                    f"usage ({expect}) {caller} {window}: p95 {found[-1].p95_ms:.0f} ms", flush=True
                )
    return found
