"""Every PromQL query names exported metrics and runs on a real Prometheus scraping a gateway."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.dashboards.dashboard_files import PROMETHEUS_TYPE, Target, rule_expressions, targets
from tests.dashboards.metric_catalogue import (
    ENGINE_GAUGES,
    GATEWAY_SIDE,
    PROMETHEUS_SIDE,
    WORKER_SIDE,
)
from tests.dashboards.panel_queries import resolve_variables
from tests.dashboards.prometheus_server import PrometheusServer
from tests.dashboards.promql_names import expand_promql, metric_names
from tests.dashboards.stack import DashboardStack, send_traffic
from tests.support import waiting

pytestmark = pytest.mark.xdist_group("dashboards-stack")
PROM_TARGETS = targets(PROMETHEUS_TYPE)
# Panels with nothing to show on a healthy stack.
MAY_BE_EMPTY = {"plumbline-stability:Firing alerts:A", "plumbline-stability:Firing alerts:B"}
# Labels each worker-side gauge must carry once the gateway exports it.
WORKER_LABELS = {
    "plumbline_eval_agreement": {"suite", "team", "model"},
    "plumbline_eval_agreement_lower": {"suite", "team", "model"},
    "plumbline_eval_agreement_upper": {"suite", "team", "model"},
    "plumbline_eval_question_agreement": {"suite", "team", "question"},
    "plumbline_eval_threshold": {"suite", "team"},
    "plumbline_eval_last_run_timestamp_seconds": {"suite", "team"},
    "plumbline_alerts_firing": {"suite", "team", "rule"},
    "plumbline_live_agreement": {"feature"},
}


def exported(gateway_url: str) -> dict[str, list[dict[str, str]]]:
    """Sample name -> label sets on the gateway's /metrics right now."""
    samples: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(httpx.get(f"{gateway_url}/metrics").text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(dict(sample.labels))
    return samples


def every_expression() -> list[tuple[str, str]]:
    """(where, PromQL) for panels, Prometheus variables and alert rules."""
    found = [(t.label, t.query["expr"]) for t in PROM_TARGETS]
    for target in PROM_TARGETS:
        for var in target.dashboard["templating"]["list"]:
            if var.get("datasource", {}).get("type") == PROMETHEUS_TYPE:
                metric = re.fullmatch(r"label_values\((\w+),\s*\w+\)", var["query"]["query"])
                assert metric is not None, var["query"]
                found.append((f"{target.dashboard['uid']}:${var['name']}", metric.group(1)))
    found += [(f"rule {name}", expr) for name, expr in rule_expressions()]
    return sorted(set(found))


def test_the_gateway_exports_the_gateway_side_catalogue(populated: DashboardStack) -> None:
    samples = exported(populated.gateway.url)
    assert GATEWAY_SIDE - set(samples) == set()
    gauges = {labels["gauge"] for labels in samples["plumbline_backend_engine"]}
    assert gauges == ENGINE_GAUGES


def test_worker_side_gauges_carry_their_documented_labels(populated: DashboardStack) -> None:
    samples = exported(populated.gateway.url)
    for name, labels in WORKER_LABELS.items():
        for sample_labels in samples.get(name, []):  # absent until the workers' part lands
            assert set(sample_labels) == labels, (name, sample_labels)
    assert set(WORKER_LABELS) == WORKER_SIDE


def test_every_query_and_rule_names_an_exported_metric(populated: DashboardStack) -> None:
    known = set(exported(populated.gateway.url)) | WORKER_SIDE | PROMETHEUS_SIDE
    unknown = {
        where: sorted(metric_names(expr) - known)
        for where, expr in every_expression()
        if metric_names(expr) - known
    }
    assert unknown == {}


def test_metric_names_skip_functions_labels_and_keywords() -> None:
    expr = (
        "histogram_quantile(0.95, sum by (le, model) "
        '(rate(plumbline_ttft_seconds_bucket{model=~"a|b"}[5m]))) > 2'
        " and on(model) time() - plumbline_eval_last_run_timestamp_seconds offset 5m"
    )
    assert metric_names(expr) == {
        "plumbline_ttft_seconds_bucket",
        "plumbline_eval_last_run_timestamp_seconds",
    }
    assert metric_names('ALERTS{alertstate="firing"} or up == 0') == {"ALERTS", "up"}


def test_route_values_expand_as_grafanas_prometheus_datasource_sends_them() -> None:
    expr = 'rate(plumbline_calls_total{endpoint=~"$endpoint",model=~"${model}"}[$__range])'
    chosen = {"endpoint": ["/v1/chat/completions", "/v1/responses"], "model": ["llama-3.1"]}
    assert expand_promql(expr, chosen) == (
        'rate(plumbline_calls_total{endpoint=~"(/v1/chat/completions|/v1/responses)",'
        'model=~"llama-3\\\\.1"}[5m])'
    )


@pytest.fixture(scope="module")
def prometheus(populated: DashboardStack) -> Iterator[PrometheusServer]:
    """Prometheus that has scraped the gateway before and after a second burst of traffic."""
    server = PrometheusServer(populated.gateway.url.removeprefix("http://"))
    with server:
        wait_for(lambda: server.query('up{job="plumbline-gateway"} == 1'), "first scrape")
        send_traffic(populated.gateway, populated.keys)
        wait_for(lambda: server.query("sum(increase(plumbline_calls_total[30s])) > 0"), "traffic")
        yield server


def wait_for(probe: Any, what: str, timeout: float = 60.0) -> Any:
    """Poll until `probe()` is truthy (Prometheus scrapes and evaluates once a second)."""
    return waiting.wait_for(probe, timeout=timeout, what=f"Prometheus showing {what}", poll=0.25)


@pytest.mark.parametrize("target", PROM_TARGETS, ids=[t.label for t in PROM_TARGETS])
def test_panel_query_runs_on_prometheus(
    target: Target, prometheus: PrometheusServer, populated: DashboardStack
) -> None:
    live = set(exported(populated.gateway.url)) | {"up"}
    with psycopg.connect(populated.reader_url, autocommit=True) as reader:
        for narrow in (False, True):
            chosen = resolve_variables(
                target.dashboard, reader, populated.gateway.url, {}, narrow=narrow
            )
            expr = expand_promql(target.query["expr"], chosen)
            result = prometheus.query(expr)
            # Worker-side gauges count too once the gateway exports them.
            if metric_names(expr) <= live and not narrow and target.label not in MAY_BE_EMPTY:
                assert result, f"no series for {expr}"


def test_rules_evaluate_and_the_dead_backend_raises_its_alerts(
    prometheus: PrometheusServer,
) -> None:
    def evaluated() -> list[dict[str, Any]]:
        rules = [r for g in prometheus.api("rules")["groups"] for r in g["rules"]]
        done = all(r["lastEvaluation"] > "2000" for r in rules)
        return rules if done else []

    rules = wait_for(evaluated, "every rule evaluated")
    assert {r["name"]: r["health"] for r in rules} == {r["name"]: "ok" for r in rules}

    expected = {
        "PlumblineBackendDown",
        "PlumblineModelUnavailable",
        "PlumblineHighServerErrorRate",
    }

    def raised() -> set[str]:
        alerts = prometheus.api("alerts")["alerts"]
        names = {a["labels"]["alertname"] for a in alerts if a["labels"].get("model") == "broken"}
        return names if expected <= names else set()

    assert wait_for(raised, "the broken model's alerts") == expected
