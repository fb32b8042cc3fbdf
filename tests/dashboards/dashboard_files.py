"""The provisioned Grafana dashboards and Prometheus files, read as the stack would read them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "dashboards"
GRAFANA_DASHBOARDS = DASHBOARDS / "grafana" / "dashboards"
PROVISIONING = DASHBOARDS / "grafana" / "provisioning"
PROMETHEUS = DASHBOARDS / "prometheus"
RULE_FILES = sorted((PROMETHEUS / "rules").glob("*.rules.yml"))
RULE_TESTS = sorted((PROMETHEUS / "tests").glob("*.test.yml"))
COMPOSE_FILE = REPO / "docker-compose.yml"
PROMETHEUS_TYPE = "prometheus"
POSTGRES_TYPE = "grafana-postgresql-datasource"


@dataclass(frozen=True)
class Target:
    """One query of one panel (or of a template variable), with where it came from."""

    dashboard: dict[str, Any]
    panel: dict[str, Any]
    query: dict[str, Any]

    @property
    def kind(self) -> str:
        """The datasource type the query runs on."""
        return str(self.query.get("datasource", self.panel["datasource"])["type"])

    @property
    def label(self) -> str:
        """A readable test id: dashboard uid, panel title, refId."""
        return f"{self.dashboard['uid']}:{self.panel['title']}:{self.query.get('refId', '')}"


def dashboard_paths() -> list[Path]:
    """Every dashboard JSON file the provisioning provider loads."""
    return sorted(GRAFANA_DASHBOARDS.glob("*.json"))


def load_dashboards() -> list[dict[str, Any]]:
    """All dashboards, parsed."""
    return [json.loads(path.read_text()) for path in dashboard_paths()]


def dashboard(uid: str) -> dict[str, Any]:
    """The dashboard with this uid."""
    return next(d for d in load_dashboards() if d["uid"] == uid)


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' nested panels included, rows themselves excluded."""
    for panel in board["panels"]:
        if panel["type"] == "row":
            yield from panel.get("panels", [])
        else:
            yield panel


def all_panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel including rows (for ids and layout)."""
    for panel in board["panels"]:
        yield panel
        if panel["type"] == "row":
            yield from panel.get("panels", [])


def targets(kind: str) -> list[Target]:
    """Every panel query of one datasource type across all dashboards."""
    found = []
    for board in load_dashboards():
        for panel in panels(board):
            for query in panel.get("targets", []):
                target = Target(board, panel, query)
                if target.kind == kind:
                    found.append(target)
    return found


def datasource_uids() -> dict[str, str]:
    """Provisioned datasources: uid -> type."""
    config = yaml.safe_load((PROVISIONING / "datasources" / "plumbline.yaml").read_text())
    return {source["uid"]: source["type"] for source in config["datasources"]}


def rule_expressions() -> list[tuple[str, str]]:
    """(alert name, PromQL) of every rule in the rule files."""
    found = []
    for path in RULE_FILES:
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                found.append((rule.get("alert") or rule["record"], rule["expr"]))
    return found
