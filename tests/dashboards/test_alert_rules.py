"""The Prometheus config and rule files pass promtool, and every alert has a unit test."""

from __future__ import annotations

import subprocess

import yaml

from tests.dashboards.dashboard_files import PROMETHEUS, RULE_FILES, RULE_TESTS
from tests.dashboards.prometheus_server import prometheus_tool


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    """Run promtool from the dashboards' Prometheus folder."""
    return subprocess.run(
        [prometheus_tool("promtool"), *args],
        cwd=PROMETHEUS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def alerts() -> list[dict[str, object]]:
    """Every alerting rule of every rule file."""
    return [
        rule
        for path in RULE_FILES
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def test_rule_files_pass_promtool_check_rules() -> None:
    result = promtool("check", "rules", *(str(p) for p in RULE_FILES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(RULE_FILES)


def test_prometheus_config_passes_promtool_check_config() -> None:
    result = promtool("check", "config", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(RULE_FILES)} rule files found" in result.stdout


def test_alert_unit_tests_pass() -> None:
    result = promtool("test", "rules", *(str(p) for p in RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_is_unit_tested_and_explains_itself() -> None:
    tested = {
        case["alertname"]
        for path in RULE_TESTS
        for test in yaml.safe_load(path.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    names = [str(rule["alert"]) for rule in alerts()]
    assert len(names) == len(set(names)), "alert names must be unique"
    assert set(names) - tested == set(), "alerts without a firing unit test"
    for rule in alerts():
        labels, annotations = rule["labels"], rule["annotations"]
        assert isinstance(labels, dict) and labels["severity"] in ("critical", "warning"), rule
        assert isinstance(annotations, dict) and {"summary", "description"} <= set(annotations)
