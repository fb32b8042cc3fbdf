"""Gauges every replica exports alike are taken once per series, in every panel and rule.

Each gateway replica (and each worker process of one) reads the eval gauges from the same
database and scrapes the same engines, so N replicas export N copies of one series that differ
only by `instance`/`pod`. Summed they count N times; compared with `on (...) group_left` they
fail as many-to-many; left alone an alert fires once per replica. A query must take `max` or
`min` by the gauge's own labels (or fewer) before anything else. The promtool unit tests run the
rules on two replicas' series (dashboards/prometheus/tests/).
"""

from __future__ import annotations

import re

import pytest

from tests.dashboards.dashboard_files import PROMETHEUS_TYPE, rule_expressions, targets

# A gauge each replica exports with the same value, and the labels that say what it measures.
REPLICA_ALIKE = {
    "plumbline_eval_agreement": {"suite", "team", "model"},
    "plumbline_eval_agreement_lower": {"suite", "team", "model"},
    "plumbline_eval_agreement_upper": {"suite", "team", "model"},
    "plumbline_eval_question_agreement": {"suite", "team", "question"},
    "plumbline_eval_threshold": {"suite", "team"},
    "plumbline_eval_last_run_timestamp_seconds": {"suite", "team"},
    "plumbline_alerts_firing": {"suite", "team", "rule"},
    "plumbline_live_agreement": {"feature"},
    "plumbline_backend_engine": {"model", "backend", "gauge"},
    "plumbline_backend_up": {"model", "backend"},
    # Each process shows a budget's spend as it last charged it: the newest is the largest.
    "plumbline_budget_spend": {"scope", "team", "key", "period"},
    "plumbline_budget_limit": {"scope", "team", "key", "period"},
}
EXPRESSIONS = sorted(
    {(t.label, t.query["expr"]) for t in targets(PROMETHEUS_TYPE)}
    | {(f"rule {name}", expr) for name, expr in rule_expressions()}
)


def unaggregated(expr: str) -> list[str]:
    """Uses of a replica-alike gauge not directly under `max`/`min by` its own labels."""
    found = []
    for name, labels in REPLICA_ALIKE.items():
        # Label matchers may hold braces in their quoted values (`${suite:regex}`).
        selector = rf'{name}\b(?:\{{(?:[^}}"]|"(?:[^"\\]|\\.)*")*\}})?'
        taken = re.compile(rf"\b(?:max|min) by \(([^)]*)\) \(\s*{selector}\s*\)")
        spans = [
            (m.start(), m.end())
            for m in taken.finditer(expr)
            if {label.strip() for label in m.group(1).split(",")} <= labels
        ]
        for use in re.finditer(rf"\b{name}\b", expr):
            if not any(start <= use.start() < end for start, end in spans):
                found.append(expr[max(0, use.start() - 20) : use.end() + 20])
    return found


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=[w for w, _ in EXPRESSIONS])
def test_replica_alike_gauges_are_taken_once(where: str, expr: str) -> None:
    assert unaggregated(expr) == [], where


def test_the_check_refuses_sums_bare_gauges_and_replica_labels() -> None:
    assert unaggregated("max by (suite, team) (plumbline_eval_threshold)") == []
    assert unaggregated('min by (model) (plumbline_backend_up{model="x"}) == 0') == []
    assert unaggregated('sum(plumbline_backend_up{model=~"$model"})')
    assert unaggregated("sum by (model) (plumbline_backend_up) == 0")
    assert unaggregated("x < on (suite, team) group_left plumbline_eval_threshold")
    assert unaggregated("max by (suite, team, instance) (plumbline_eval_threshold)")
    assert unaggregated("max by (feature) (plumbline_live_agreement) + plumbline_live_agreement")
