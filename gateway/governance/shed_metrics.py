"""The shedding figures /metrics exports: calls shed by model and reason, and each pressure."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from gateway.config import GatewayConfig
from gateway.governance.shedding import LoadShedder


def shedding_metrics(shedder: LoadShedder, config: GatewayConfig) -> Iterator[Metric]:
    """plumbline_shed_total{model,reason}, and the pressure and product calls of shed models."""
    shed = CounterMetricFamily(
        "plumbline_shed",
        "Calls shed because their model was saturated, by reason (eval, live_sample, "
        "over_fair_share)",
        labels=["model", "reason"],
    )
    for (name, reason), count in sorted(shedder.shed_counts.items()):
        shed.add_metric([name, reason], count)
    pressure = GaugeMetricFamily(
        "plumbline_shedding_pressure",
        "Load of the model's least loaded backend over its shedding thresholds (1: saturated)",
        labels=["model"],
    )
    product = GaugeMetricFamily(
        "plumbline_shedding_product_in_flight",
        "Product calls of the model in flight through this process (fair share divides them)",
        labels=["model"],
    )
    for model in config.models:
        if model.shedding is not None:
            pressure.add_metric([model.name], shedder.pressure(model))
            product.add_metric([model.name], shedder.team_calls(model.name))
    yield from (shed, pressure, product)
