"""The budget guard's gauges and counters for /metrics."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.limits import from_micros

LABELS = ["scope", "team", "key", "period"]


def budget_metric_families(guard: BudgetGuard) -> Iterator[Metric]:
    """Spend against each budget this process charged or refused, and what the guard did."""
    counts = guard.counts
    spend = GaugeMetricFamily(
        "plumbline_budget_spend",
        "Spend in this period of each budget, as last charged or refused by this process",
        labels=LABELS,
    )
    limit = GaugeMetricFamily(
        "plumbline_budget_limit", "The hard limit of each budget in its period", labels=LABELS
    )
    for labels, (spent, hard) in list(counts.shown.items()):
        spend.add_metric(list(labels), from_micros(spent))
        limit.add_metric(list(labels), from_micros(hard))
    refusals = CounterMetricFamily(
        "plumbline_budget_refusals",
        "Calls refused with a 429 because a budget was spent",
        labels=["scope", "period"],
    )
    for (scope, period), count in sorted(counts.refusals.items()):
        refusals.add_metric([scope, period], count)
    notices = CounterMetricFamily(
        "plumbline_budget_notices",
        "Soft-level notices sent by this process, by outcome (one per channel)",
        labels=["outcome"],
    )
    for outcome, count in counts.notices.items():
        notices.add_metric([outcome], count)
    failures = CounterMetricFamily(
        "plumbline_budget_store_failures",
        "Budget store (Redis) commands that failed, and calls admitted (open) or refused "
        "(closed) without it",
        labels=["reason"],
    )
    for reason, count in counts.store.items():
        failures.add_metric([reason], count)
    lost = CounterMetricFamily(
        "plumbline_budget_settlements_lost",
        "Charges that could not reach Redis (the call's hold stands for the period)",
    )
    lost.add_metric([], counts.settlements_lost)
    yield from (spend, limit, refusals, notices, failures, lost)
