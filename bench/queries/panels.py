"""Dashboard panels over the calls table, run as Grafana would send them, and timed."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from bench.harness.stats import percentile
from bench.queries.usage_api import Timed
from tests.dashboards.dashboard_files import POSTGRES_TYPE, dashboard, panels
from tests.dashboards.grafana_sql import TimeRange, expand

# Boards whose panels read the calls tables (the stability board reads eval tables only).
BOARDS = (
    *("plumbline-call-explorer", "plumbline-gateway-overview"),
    *("plumbline-model-serving", "plumbline-call-detail"),
)
PREFERRED = {"model": "tiny", "team": "team-a", "feature": "chat", "status": "2xx"}
# Prometheus-fed variables take their values from the calls, as Prometheus would have them.
PROMETHEUS_VALUES = {
    "model": "SELECT DISTINCT model FROM calls WHERE created_at > now() - interval '1 hour'",
    "team": "SELECT name FROM teams",
    "feature": "SELECT DISTINCT feature FROM calls WHERE created_at > now() - interval '1 hour'",
    "endpoint": "SELECT DISTINCT endpoint FROM calls WHERE created_at > now() - interval '1 hour'",
}
_NICE = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600)
_RELATIVE = re.compile(r"now-(\d+)([mhd])")


def grafana_range(relative: str, width_points: int = 1000) -> TimeRange:
    """`now-6h` as a TimeRange, with the $__interval Grafana derives for ~1,000 points."""
    match = _RELATIVE.fullmatch(relative)
    assert match is not None, relative
    unit = {"m": 60, "h": 3600, "d": 86400}[match.group(2)]
    span = int(match.group(1)) * unit
    step = next((n for n in _NICE if n >= span / width_points), 86400)
    interval = f"{step // 60}m" if step % 60 == 0 else f"{step}s"
    end = datetime.now(UTC)
    return TimeRange(end - timedelta(seconds=span), end, interval)


def _options(connection: psycopg.Connection, var: dict[str, Any], window: TimeRange) -> list[str]:
    if var["type"] == "custom":
        return [v.strip() for v in var["query"].split(",")]
    if var["datasource"]["type"] == POSTGRES_TYPE:
        sql = expand(var["query"], window, {})
    else:
        sql = PROMETHEUS_VALUES[var["name"]]
    return [str(row[0]) for row in connection.execute(sql.encode()).fetchall()]


def selections(
    connection: psycopg.Connection,
    board: dict[str, Any],
    window: TimeRange,
    textboxes: dict[str, str],
    narrow: bool,
) -> dict[str, list[str] | str]:
    """Every variable on All (its allValue where it has one), or on one preferred value."""
    chosen: dict[str, list[str] | str] = {}
    for var in board["templating"]["list"]:
        name = var["name"]
        if var["type"] == "textbox":
            chosen[name] = [textboxes[name]]
        elif var.get("includeAll") and not narrow:
            chosen[name] = var.get("allValue") or _options(connection, var, window)
        else:
            chosen[name] = [PREFERRED.get(name) or _options(connection, var, window)[0]]
    return chosen


def timed_sql(connection: psycopg.Connection, name: str, sql: bytes, repeats: int) -> Timed:
    """Run one statement `repeats` times; p50 and p95 of its response time."""
    times, rows = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        rows = len(connection.execute(sql).fetchall())
        times.append((time.perf_counter() - started) * 1000)
    return Timed(name, percentile(times, 0.5), percentile(times, 0.95), rows, sql)


def time_panels(url: str, textboxes: dict[str, str], repeats: int) -> list[Timed]:
    """Each calls panel at its board's default range, variables on All and narrowed."""
    found = []
    with psycopg.connect(url, autocommit=True) as connection:
        for uid in BOARDS:
            board = dashboard(uid)
            window = grafana_range(board["time"]["from"])
            has_all = any(v.get("includeAll") for v in board["templating"]["list"])
            for narrow in (False, True) if has_all else (False,):
                chosen = selections(connection, board, window, textboxes, narrow)
                scope = "one value each" if narrow else "All"
                for panel in panels(board):
                    for target in panel.get("targets", []):
                        if "rawSql" not in target:
                            continue
                        name = (
                            f"{board['title']}: {panel['title']} ({board['time']['from']}, {scope})"
                        )
                        sql = expand(target["rawSql"], window, chosen).encode()
                        found.append(timed_sql(connection, name, sql, repeats))
                        print(f"{name}: p95 {found[-1].p95_ms:.0f} ms", flush=True)
    return found
