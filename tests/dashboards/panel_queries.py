"""Run dashboard SQL as Grafana would: template variables resolved, macros expanded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from prometheus_client.parser import text_string_to_metric_families

from tests.dashboards.dashboard_files import POSTGRES_TYPE
from tests.dashboards.grafana_sql import TimeRange, expand

# Values picked when a dashboard is narrowed to one value per variable (and for single-value ones).
PREFERRED = {"model": "tiny", "team": "team-a", "feature": "chat", "status": "2xx"}
PREFERRED_ON = {"plumbline-stability": {"team": "legal", "suite": "contracts"}}
NUMERIC_TYPES = frozenset({20, 21, 23, 700, 701, 1700})  # int8/2/4, float4/8, numeric
TEXT_TYPES = frozenset({25, 1043})  # text, varchar


@dataclass(frozen=True)
class Result:
    """Columns (name -> type oid) and rows of one query."""

    sql: str
    columns: dict[str, int]
    rows: list[tuple[Any, ...]]

    def column(self, name: str) -> list[Any]:
        """One column's values."""
        index = list(self.columns).index(name)
        return [row[index] for row in self.rows]


def time_range() -> TimeRange:
    """The last hour, a little into the future so calls of this second are inside it."""
    now = datetime.now(UTC)
    return TimeRange(now - timedelta(hours=1), now + timedelta(minutes=5), "1m")


def run_sql(connection: psycopg.Connection, sql: str) -> Result:
    """Execute and fetch; the connection stays usable after a failing statement."""
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute(sql.encode())
        assert cursor.description is not None, sql
        columns = {c.name: c.type_code for c in cursor.description}
        return Result(sql, columns, cursor.fetchall())


def _label_values(gateway_url: str, query: str) -> list[str]:
    match = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", query)
    assert match is not None, f"unsupported Prometheus variable query {query!r}"
    metric, label = match.groups()
    values = set()
    for family in text_string_to_metric_families(httpx.get(f"{gateway_url}/metrics").text):
        for sample in family.samples:
            if sample.name == metric and label in sample.labels:
                values.add(sample.labels[label])
    return sorted(values)


def resolve_variables(
    board: dict[str, Any],
    connection: psycopg.Connection,
    gateway_url: str,
    textboxes: dict[str, str],
    *,
    narrow: bool,
) -> dict[str, list[str] | str]:
    """Selections for every variable: "All" (or the preferred value), or one value each."""
    chosen: dict[str, list[str] | str] = {}
    for var in board["templating"]["list"]:
        name = var["name"]
        if var["type"] == "textbox":
            chosen[name] = [textboxes[name]]
            continue
        options = variable_options(var, connection, gateway_url, chosen)
        assert options, f"{board['uid']}: variable {name} has no values"
        if var.get("includeAll") and not narrow:
            chosen[name] = var.get("allValue") or options
        else:
            preferred = {**PREFERRED, **PREFERRED_ON.get(board["uid"], {})}
            pick = preferred.get(name, options[0])
            assert pick in options, f"{board['uid']}: {pick!r} not among {name}'s {options}"
            chosen[name] = [pick]
    return chosen


def variable_options(
    var: dict[str, Any],
    connection: psycopg.Connection,
    gateway_url: str,
    chosen: dict[str, list[str] | str],
) -> list[str]:
    """The values a variable offers, from its own query."""
    if var["type"] == "custom":
        return [v.strip() for v in var["query"].split(",")]
    if var["datasource"]["type"] == POSTGRES_TYPE:
        result = run_sql(connection, expand(var["query"], time_range(), chosen))
        return [str(row[0]) for row in result.rows]
    return _label_values(gateway_url, var["query"]["query"])
