"""Spot checks that panels compute what their titles claim, against the data put in."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.dashboards.dashboard_files import dashboard, panels
from tests.dashboards.grafana_sql import expand
from tests.dashboards.panel_queries import Result, run_sql, time_range
from tests.dashboards.stack import DashboardStack

pytestmark = pytest.mark.xdist_group("dashboards-stack")
EVERYTHING = {"team": ["team-a", "team-b"], "status": ["2xx", "4xx", "5xx", "cancelled"]}


@pytest.fixture(scope="module")
def reader(populated: DashboardStack) -> Iterator[psycopg.Connection]:
    """A connection as Grafana's read-only role."""
    with psycopg.connect(populated.reader_url, autocommit=True) as connection:
        yield connection


def panel_result(
    reader: psycopg.Connection, uid: str, title: str, **selections: list[str]
) -> Result:
    """Run one panel's query with the given variable values."""
    panel = next(p for p in panels(dashboard(uid)) if p["title"] == title)
    return run_sql(reader, expand(panel["targets"][0]["rawSql"], time_range(), selections))


def explorer(reader: psycopg.Connection, **selections: list[str]) -> Result:
    """The call explorer's Calls table, every filter open unless given."""
    features = run_sql(reader, "SELECT DISTINCT coalesce(feature, '(none)') FROM calls").rows
    models = run_sql(reader, "SELECT DISTINCT coalesce(model, '(none)') FROM calls").rows
    chosen = {
        **EVERYTHING,
        "feature": [r[0] for r in features],
        "model": [r[0] for r in models],
        "search": [""],
        **selections,
    }
    return panel_result(reader, "plumbline-call-explorer", "Calls", **chosen)


def test_explorer_filters_by_status_team_and_search(reader: psycopg.Connection) -> None:
    failed = run_sql(reader, "SELECT id FROM calls WHERE status_code >= 500 AND NOT cancelled")
    assert failed.rows
    assert set(explorer(reader, status=["5xx"]).column("id")) == {r[0] for r in failed.rows}
    team_b = explorer(reader, team=["team-b"])
    assert team_b.rows and set(team_b.column("team")) == {"team-b"}
    one = run_sql(reader, "SELECT request_id, id FROM calls ORDER BY created_at LIMIT 1").rows[0]
    assert explorer(reader, search=[one[0]]).column("id") == [one[1]]


def test_concurrency_counts_the_calls_in_flight(reader: psycopg.Connection) -> None:
    points = panel_result(reader, "plumbline-model-serving", "ITL vs concurrency", model=["tiny"])
    concurrency = points.column("concurrency")
    # Eight streams were sent at once; every call counts itself.
    assert min(concurrency) >= 1 and max(concurrency) >= 4


def test_worst_questions_are_the_latest_runs_lowest(reader: psycopg.Connection) -> None:
    latest = run_sql(reader, "SELECT max(id) FROM eval_runs WHERE summary IS NOT NULL").rows[0][0]
    expected = run_sql(
        reader,
        "SELECT question_key, agreement FROM eval_question_results "
        f"WHERE run_id = {int(latest)} ORDER BY agreement, question_key",
    ).rows
    shown = panel_result(
        reader,
        "plumbline-stability",
        "Worst questions in each suite's latest run",
        team=["legal"],
        suite=["contracts"],
    )
    assert list(zip(shown.column("question"), shown.column("agreement"), strict=True)) == expected
    assert set(shown.column("run_id")) == {latest}


def test_call_detail_shows_the_calls_own_row(reader: psycopg.Connection) -> None:
    call_id, model, tokens = run_sql(
        reader, "SELECT id, model, completion_tokens FROM calls WHERE status_code = 200 LIMIT 1"
    ).rows[0]
    fields = dict(
        panel_result(reader, "plumbline-call-detail", "Recorded fields", call_id=[call_id]).rows
    )
    assert (fields["id"], fields["model"], fields["completion_tokens"]) == (
        call_id,
        model,
        str(tokens),
    )
