"""The tracing scenario's sides: one gateway per collector state, and their span counters.

Every side is a Plumbline gateway recording to Postgres in front of the same simulator. Each one
is started with its own OTEL_* variables: tracing off (no endpoint), or every call sampled
(`always_on`) and exported to a live OTLP receiver, to a port where nothing listens, or to a
port that accepts connections and never answers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass

from bench.proxies.sides import Side, plumbline_config
from gateway.tracing.exporter import DROP_REASONS
from plumbline.blocking_http import BlockingHttp
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.otlp_receiver import HungCollector, OtlpReceiver, free_port_url

TRACING_SIDES = ("off", "live", "dead", "hung")
TRACING_LABELS = {
    "off": "tracing off",
    "live": "on, live collector",
    "dead": "on, collector down",
    "hung": "on, collector hung",
}
# The variables each side sets itself, so nothing in the bench's own environment turns tracing
# on for the "off" side or points a traced side elsewhere.
_OWN = ("OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT")
# Batching and timeouts come from the bench's environment (set them there to try others), else
# the specification's defaults, written out so the report states what the sides ran with.
SPEC_DEFAULTS = {
    "OTEL_BSP_MAX_QUEUE_SIZE": "2048",
    "OTEL_BSP_SCHEDULE_DELAY": "5000",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "512",
    "OTEL_BSP_EXPORT_TIMEOUT": "30000",
    "OTEL_EXPORTER_OTLP_TIMEOUT": "10000",
}


def tracing_env(endpoint: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """OTEL_* for a side: no endpoint (off), or every call sampled and sent to `endpoint`."""
    env = dict.fromkeys(_OWN, "")
    if endpoint is None:
        return {**env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ""}
    batching = {name: environ.get(name, "").strip() or v for name, v in SPEC_DEFAULTS.items()}
    return {
        **env,
        **batching,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces",
        "OTEL_TRACES_SAMPLER": "always_on",
        "OTEL_TRACES_SAMPLER_ARG": "",
    }


@dataclass(frozen=True)
class SpanCounts:
    """A gateway's calls recorded and spans exported and dropped, from its /metrics."""

    recorded: float
    exported: float
    dropped: dict[str, float]

    @property
    def queued(self) -> float:
        """Spans neither exported nor dropped yet (every call, when tracing is off)."""
        return self.recorded - self.exported - sum(self.dropped.values())


def _counter(page: str, line: str) -> float:
    found = re.search(rf"^{re.escape(line)} (\S+)$", page, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def span_counts(base_url: str) -> SpanCounts:
    """Read the counters off the gateway's Prometheus page."""
    with BlockingHttp() as http:
        page = http.request("GET", f"{base_url}/metrics", timeout_s=10, read_limit=2**22)
    text = page.body.decode()
    dropped = {
        reason: _counter(text, f'plumbline_trace_spans_dropped_total{{reason="{reason}"}}')
        for reason in DROP_REASONS
    }
    return SpanCounts(
        recorded=_counter(text, 'plumbline_sink_records_total{outcome="submitted"}'),
        exported=_counter(text, "plumbline_trace_spans_exported_total"),
        dropped=dropped,
    )


@dataclass(frozen=True)
class TracingSides:
    """The started sides, each gateway's base URL, and the live collector."""

    sides: list[Side]
    base_urls: Mapping[str, str]
    receiver: OtlpReceiver


def _endpoints(exits: ExitStack, receiver: OtlpReceiver) -> dict[str, str | None]:
    hung = exits.enter_context(HungCollector())
    return {"off": None, "live": receiver.url, "dead": free_port_url(), "hung": hung.url}


def start_tracing_sides(
    exits: ExitStack, simulator: SimulatorProcess, names: tuple[str, ...] = TRACING_SIDES
) -> TracingSides:
    """A collector of each kind and a gateway per side (all stopped when `exits` closes)."""
    unknown = set(names) - set(TRACING_SIDES)
    if unknown:
        raise ValueError(f"unknown sides {sorted(unknown)}; choose from {TRACING_SIDES}")
    receiver = exits.enter_context(OtlpReceiver())
    endpoints = _endpoints(exits, receiver)
    database = exits.enter_context(postgres_database("plumbline_bench_tracing"))
    headers = {"Authorization": f"Bearer {issue_key(database, 'bench')}"}
    sides, base_urls = [], {}
    for name in names:
        env = tracing_env(endpoints[name], os.environ)
        gateway = GatewayProcess(plumbline_config(simulator.base_url), database, env=env)
        exits.enter_context(gateway)
        assert gateway.process is not None
        base_urls[name] = gateway.url
        sides.append(Side(name, gateway.url + "/v1/chat/completions", headers, gateway.process.pid))
    return TracingSides(sides, base_urls, receiver)
