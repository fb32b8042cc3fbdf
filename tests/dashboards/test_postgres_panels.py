"""Every Postgres panel and variable query runs, as Grafana's read-only role, on real data."""

from __future__ import annotations

import re
from collections.abc import Iterator

import psycopg
import pytest

from tests.dashboards.dashboard_files import POSTGRES_TYPE, Target, targets
from tests.dashboards.grafana_sql import expand
from tests.dashboards.panel_queries import (
    NUMERIC_TYPES,
    TEXT_TYPES,
    Result,
    resolve_variables,
    run_sql,
    time_range,
)
from tests.dashboards.stack import DashboardStack

pytestmark = pytest.mark.xdist_group("dashboards-stack")
SQL_TARGETS = targets(POSTGRES_TYPE)


@pytest.fixture(scope="module")
def reader(populated: DashboardStack) -> Iterator[psycopg.Connection]:
    """A connection as the role Grafana's Postgres datasource logs in with."""
    with psycopg.connect(populated.reader_url, autocommit=True) as connection:
        yield connection


@pytest.fixture(scope="module")
def textboxes(reader: psycopg.Connection) -> dict[str, str]:
    """Free-text variables: an eval sample's call (it has logprobs) and an empty search."""
    call = run_sql(
        reader,
        "SELECT s.call_id FROM eval_samples s JOIN call_logprobs l ON l.call_id = s.call_id "
        "ORDER BY s.id LIMIT 1",
    )
    return {"call_id": call.rows[0][0], "search": ""}


def run_panel(
    target: Target, reader: psycopg.Connection, stack: DashboardStack, textboxes: dict[str, str]
) -> tuple[Result, Result]:
    """The query with every variable on "All", and narrowed to one value per variable."""
    results = []
    for narrow in (False, True):
        chosen = resolve_variables(
            target.dashboard, reader, stack.gateway.url, textboxes, narrow=narrow
        )
        results.append(run_sql(reader, expand(target.query["rawSql"], time_range(), chosen)))
    return results[0], results[1]


def expected_fields(target: Target) -> set[str]:
    """Fields the panel refers to by name: overrides, data links, chart axes."""
    panel = target.panel
    names = {
        o["matcher"]["options"]
        for o in panel["fieldConfig"]["overrides"]
        if o["matcher"]["id"] == "byName"
    }
    names.update(re.findall(r"__data\.fields\.(\w+)", str(panel["fieldConfig"])))
    options = panel["options"]
    names.update(filter(None, [options.get("xField"), options.get("dims", {}).get("x")]))
    return names


@pytest.mark.parametrize("target", SQL_TARGETS, ids=[t.label for t in SQL_TARGETS])
def test_panel_query_returns_the_columns_its_panel_reads(
    target: Target,
    reader: psycopg.Connection,
    populated: DashboardStack,
    textboxes: dict[str, str],
) -> None:
    everything, narrowed = run_panel(target, reader, populated, textboxes)
    assert everything.rows, f"no rows with every variable on All:\n{everything.sql}"
    for result in (everything, narrowed):
        assert expected_fields(target) <= set(result.columns), result.columns
        if target.query["format"] == "time_series":
            values = {k: v for k, v in result.columns.items() if k not in ("time", "metric")}
            assert result.columns.get("time") in NUMERIC_TYPES | {1184}, result.columns
            assert result.columns.get("metric", 25) in TEXT_TYPES
            assert values and set(values.values()) <= NUMERIC_TYPES, result.columns
    if target.panel["type"] == "xychart":
        numeric = [k for k, oid in everything.columns.items() if oid in NUMERIC_TYPES]
        assert numeric[0] == target.panel["options"]["dims"]["x"] and len(numeric) >= 2
    if target.panel["type"] == "barchart":
        assert everything.columns[target.panel["options"]["xField"]] in TEXT_TYPES


def test_the_reader_role_can_only_read(reader: psycopg.Connection) -> None:
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        run_sql(reader, "INSERT INTO teams (name) VALUES ('intruder') RETURNING id")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        run_sql(reader, "SET TRANSACTION READ WRITE; DELETE FROM calls RETURNING id")
