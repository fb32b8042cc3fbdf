"""Every dashboard is well-formed Grafana JSON that the provisioned datasources can serve."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from tests.dashboards.dashboard_files import (
    POSTGRES_TYPE,
    PROMETHEUS_TYPE,
    all_panels,
    dashboard_paths,
    datasource_uids,
    load_dashboards,
    panels,
)

PATHS = dashboard_paths()
EXPECTED = {
    "plumbline-gateway-overview",
    "plumbline-model-serving",
    "plumbline-stability",
    "plumbline-call-explorer",
    "plumbline-call-detail",
}


def test_the_four_views_and_call_detail_are_provisioned() -> None:
    boards = load_dashboards()
    assert {b["uid"] for b in boards} == EXPECTED
    assert len({b["title"] for b in boards}) == len(boards)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_dashboard_has_grafana_basics(path: Path) -> None:
    board = json.loads(path.read_text())
    assert re.fullmatch(r"[a-z0-9-]{1,40}", board["uid"]) and board["title"]
    assert isinstance(board["schemaVersion"], int) and board["panels"]
    ids = [panel["id"] for panel in all_panels(board)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in panels(board):
        check_panel(panel)
    check_layout(list(all_panels(board)))


def check_panel(panel: dict[str, Any]) -> None:
    """Type, title, description, a provisioned datasource, and queries for it."""
    sources = datasource_uids()
    where = panel.get("title")
    assert panel["type"] and panel["title"] and panel["description"], where
    assert sources.get(panel["datasource"]["uid"]) == panel["datasource"]["type"], where
    refs = [t["refId"] for t in panel["targets"]]
    assert refs and len(refs) == len(set(refs)), where
    for target in panel["targets"]:
        assert target["datasource"] == panel["datasource"], where
        if panel["datasource"]["type"] == PROMETHEUS_TYPE:
            assert target["expr"].strip(), where
        else:
            assert panel["datasource"]["type"] == POSTGRES_TYPE
            assert target["rawQuery"] and target["rawSql"].strip(), where
            assert target["format"] in ("time_series", "table"), where


def check_layout(items: list[dict[str, Any]]) -> None:
    """Panels sit on the 24-column grid without overlapping."""
    boxes = []
    for panel in items:
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) for k in ("h", "w", "x", "y")), panel["title"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        boxes.append((panel["title"], grid))
    for (a, one), (b, two) in combinations(boxes, 2):
        apart = (
            one["x"] + one["w"] <= two["x"]
            or two["x"] + two["w"] <= one["x"]
            or one["y"] + one["h"] <= two["y"]
            or two["y"] + two["h"] <= one["y"]
        )
        assert apart, f"{a!r} overlaps {b!r}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_variables_use_provisioned_datasources(path: Path) -> None:
    board = json.loads(path.read_text())
    variables = board["templating"]["list"]
    names = [v["name"] for v in variables]
    assert len(names) == len(set(names))
    for var in variables:
        assert var["type"] in ("query", "custom", "textbox"), var["name"]
        if var["type"] == "query":
            assert datasource_uids().get(var["datasource"]["uid"]) == var["datasource"]["type"]


def test_links_to_a_call_open_the_call_detail_dashboard() -> None:
    boards = {b["uid"]: b for b in load_dashboards()}
    links = [
        (board["uid"], link["url"])
        for board in boards.values()
        for panel in panels(board)
        for override in panel["fieldConfig"]["overrides"]
        for prop in override["properties"]
        if prop["id"] == "links"
        for link in prop["value"]
    ]
    assert links, "the call explorer links calls to their detail"
    for source, url in links:
        match = re.match(r"/d/([\w-]+)/[\w-]+\?var-(\w+)=\$\{__data\.fields\.(\w+)\}", url)
        assert match is not None, (source, url)
        uid, variable, _field = match.groups()
        assert variable in {v["name"] for v in boards[uid]["templating"]["list"]}, url
