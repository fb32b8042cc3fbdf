"""Build and tear down the gateway's long-lived objects (engine, sink, HTTP client, monitor)."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Iterator

import aiohttp
from prometheus_client import ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy import Engine, inspect

from gateway.auth import service as auth_service
from gateway.auth.key_cache import KeyCache
from gateway.auth.last_use import LastUse
from gateway.auth.last_use_flusher import LastUseFlusher
from gateway.config import GatewayConfig
from gateway.governance.budgets.metrics import budget_metric_families
from gateway.governance.budgets.setup import budget_guard
from gateway.governance.shed_metrics import shedding_metrics
from gateway.governance.shedding import LoadShedder
from gateway.key_invalidation import start_key_invalidation, stop_key_invalidation
from gateway.live_sampling import LiveSampler
from gateway.metrics import CallbackCollector, GatewayMetrics
from gateway.otlp_metrics.prometheus_counters import metric_export_counters
from gateway.otlp_metrics.settings import metric_export_settings
from gateway.proxy.call_kinds.served import served_kinds
from gateway.proxy.rate_limits import RateLimiter
from gateway.proxy.rate_limits.redis_buckets import connect_buckets
from gateway.recording.call_sink import CallSink
from gateway.recording.observation import CallObservation
from gateway.recording.recorder_process import RecorderProcess
from gateway.recording.sink import LogSink
from gateway.recording.sink_stats import LOGPROB_FALLBACK_REASONS, SinkStats
from gateway.response_owners.owners import ResponseOwners
from gateway.response_owners.repository import OwnerRepository
from gateway.routing.health import HealthMonitor
from gateway.routing.model_backends import ModelBackends
from gateway.stability_metrics import StabilityCollector
from gateway.state import GatewayState
from gateway.tracing.exporter import DROP_REASONS
from gateway.upstream.connections_by_origin import ConnectionsByOrigin
from gateway.worker_pool.slot import WorkerSlot, single_process_orphans
from plumbline.db import create_db_engine, make_session_factory
from plumbline.otlp.sampler import TraceSampler, sampler_from_env
from plumbline.otlp.settings import trace_export_settings
from plumbline.repositories import api_keys as key_repo
from plumbline.settings import Settings

log = logging.getLogger(__name__)


class SchemaMissingError(RuntimeError):
    """The database has not been migrated."""


def _key_lookup_metrics(state: GatewayState) -> Iterator[Metric]:
    counts = state.keys.lookup_counts()
    now = GaugeMetricFamily(
        "plumbline_key_lookups", "Database lookups of uncached keys now", labels=["state"]
    )
    for name in ("running", "waiting"):
        now.add_metric([name], counts[name])
    done = CounterMetricFamily(
        "plumbline_key_lookup_outcomes",
        "Uncached key lookups since start: started, joined another of the same prefix, "
        "refused (queue full), throttled (client's failed lookups spent)",
        labels=["outcome"],
    )
    for name in ("started", "joined", "refused", "throttled"):
        done.add_metric([name], counts[name])
    yield from (now, done)


def _trace_export_metrics(stats: SinkStats) -> Iterator[Metric]:
    exported = CounterMetricFamily(
        "plumbline_trace_spans_exported", "Call spans the OTLP collector accepted"
    )
    exported.add_metric([], stats.trace_exported)
    dropped = CounterMetricFamily(
        "plumbline_trace_spans_dropped",
        "Call spans not exported: queue full, collector failing, or not buildable",
        labels=["reason"],
    )
    for reason in DROP_REASONS:
        dropped.add_metric([reason], getattr(stats, f"trace_dropped_{reason}"))
    yield from (exported, dropped)


def _live_gauges(state: GatewayState) -> Iterator[Metric]:
    sink = state.sink
    queue = GaugeMetricFamily("plumbline_sink_queue_depth", "Call records waiting to be written")
    queue.add_metric([], sink.queue_depth)
    up = GaugeMetricFamily("plumbline_sink_database_up", "1 while the log sink can write")
    up.add_metric([], 1.0 if sink.stats.database_up else 0.0)
    records = CounterMetricFamily(
        "plumbline_sink_records", "Call records by outcome since start", labels=["outcome"]
    )
    for outcome in ("submitted", "journaled", "written", "spooled", "replayed", "dropped"):
        records.add_metric([outcome], getattr(sink.stats, outcome))
    pending = GaugeMetricFamily("plumbline_spool_pending_files", "Spooled batches not replayed")
    pending.add_metric([], sink.spooled_files())
    quarantined = CounterMetricFamily(
        "plumbline_sink_quarantined_rows", "Rows the database refused for their content"
    )
    quarantined.add_metric([], sink.stats.quarantined)
    fallbacks = CounterMetricFamily(
        "plumbline_logprob_v3_fallbacks",
        "Records meant for the v3 logprob form stored as v2 instead, by reason",
        labels=["reason"],
    )
    for reason in LOGPROB_FALLBACK_REASONS:
        fallbacks.add_metric([reason], getattr(sink.stats, f"logprob_v3_fallback_{reason}"))
    yield from (queue, up, records, pending, quarantined, fallbacks)
    yield from _trace_export_metrics(sink.stats)
    yield from metric_export_counters(sink.stats)
    yield from _key_lookup_metrics(state)
    labels = ["model", "backend"]
    healthy = GaugeMetricFamily(
        "plumbline_backend_up", "1 if the backend is in rotation", labels=labels
    )
    in_flight = GaugeMetricFamily("plumbline_backend_in_flight", "Calls in flight", labels=labels)
    engine = GaugeMetricFamily(
        "plumbline_backend_engine",
        "vLLM gauges scraped from the backend",
        labels=[*labels, "gauge"],
    )
    for backend in state.backends.all():
        key = [backend.model, backend.url]
        healthy.add_metric(key, 1.0 if backend.healthy else 0.0)
        in_flight.add_metric(key, backend.in_flight)
        for name, value in backend.engine_gauges.items():
            engine.add_metric([*key, name], value)
    decisions = CounterMetricFamily(
        "plumbline_routing_decisions",
        "Backend choices by the model's routing policy, by reason",
        labels=["model", "reason"],
    )
    for (model, reason), count in sorted(state.backends.decisions.items()):
        decisions.add_metric([model, reason], count)
    yield from (healthy, in_flight, engine, decisions)


def _loop_gauges(loop: asyncio.AbstractEventLoop) -> Iterator[Metric]:
    # all_tasks copes with being called from the thread /metrics runs in.
    tasks = GaugeMetricFamily(
        "plumbline_event_loop_tasks", "Unfinished asyncio tasks (calls, watchers, monitors)"
    )
    tasks.add_metric([], len(asyncio.all_tasks(loop)))
    yield tasks


def check_schema(engine: Engine) -> None:
    """Refuse to start on a database that was never migrated."""
    if not inspect(engine).has_table("calls"):
        raise SchemaMissingError(
            f"The database {engine.url.render_as_string(hide_password=True)} has no Plumbline "
            "tables; run `plumbline migrate` first."
        )


def _call_sink(
    settings: Settings,
    config: GatewayConfig,
    metrics: GatewayMetrics,
    engine: Engine,
    slot: WorkerSlot | None,
) -> CallSink:
    # Checked here so a bad OTEL_* variable stops the start-up, not each recorder it spawns.
    tracing = trace_export_settings(os.environ)
    metric_export = metric_export_settings(os.environ)
    if not config.recording.in_process:
        return RecorderProcess(
            settings.database.url,
            settings.database.pool_size,
            config.recording,
            observer=metrics.observe,
            orphans=slot.orphans() if slot else single_process_orphans(config.recording.spool_dir),
        )
    if tracing.enabled:
        log.warning("trace export runs in the recorder process; recording.in_process has none")
    if metric_export.otlp:
        log.warning("OTLP metrics run in the recorder process; recording.in_process has none")
    return LogSink(
        engine,
        config.recording,
        observer=lambda record, row: metrics.observe(CallObservation.of(record, row)),
    )


def _trace_sampler(config: GatewayConfig) -> TraceSampler | None:
    """The sampler of the gateway's spans; None (pass the client's context on) without export."""
    # Without an exporter the gateway's span would never exist, and a vLLM span made its child
    # would hang off nothing in the client's trace.
    if config.recording.in_process or not trace_export_settings(os.environ).enabled:
        return None
    return sampler_from_env(os.environ)


def _rate_limiter(settings: Settings, config: GatewayConfig) -> RateLimiter:
    """Limits in memory, or in Redis (PLUMBLINE_REDIS__URL) shared by every replica."""
    limits = config.limits.rate_limits
    if limits.store == "memory":
        return RateLimiter(limits)
    shared = connect_buckets(settings.redis.url, settings.worker.key_prefix, limits)
    return RateLimiter(limits, shared)


async def build_state(
    settings: Settings, config: GatewayConfig, slot: WorkerSlot | None = None
) -> GatewayState:
    """Create everything a running gateway needs; `slot`: it is one of a pool's workers."""
    engine = create_db_engine(settings.database.url, pool_size=settings.database.pool_size)
    try:
        check_schema(engine)
    except SchemaMissingError:
        engine.dispose()
        raise
    sampler = LiveSampler(config.live_sampling)
    metrics = GatewayMetrics(
        [*config.features, *sampler.features],
        [m.name for m in config.models],
        [kind.path for kind in served_kinds()],
    )
    sink = _call_sink(settings, config, metrics, engine, slot)
    sink.start()
    http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=False))
    upstream = ConnectionsByOrigin(config.limits.backends)
    backends = ModelBackends(config)
    monitor = HealthMonitor(backends, http, config.health)
    state = GatewayState(
        settings=settings,
        config=config,
        engine=engine,
        sessions=make_session_factory(engine),
        sink=sink,
        http=http,
        upstream=upstream,
        backends=backends,
        monitor=monitor,
        keys=KeyCache(
            make_session_factory(engine),
            settings.key_salt.get_secret_value(),
            auth_service,
            config.limits.key_cache_ttl_s,
            config.limits.key_lookups,
            LastUse(config.limits.key_last_used.max_keys),
        ),
        metrics=metrics,
        sampler=sampler,
        limiter=_rate_limiter(settings, config),
        budgets=budget_guard(settings, config, http),
        response_owners=ResponseOwners(make_session_factory(engine), OwnerRepository()),
        shedder=LoadShedder(backends),
        tracing=_trace_sampler(config),
        prometheus_metrics=metric_export_settings(os.environ).prometheus,
        worker=slot,
    )
    metrics.add_collector(CallbackCollector(lambda: _live_gauges(state)))
    metrics.add_collector(CallbackCollector(state.limiter.metric_families))
    metrics.add_collector(CallbackCollector(lambda: budget_metric_families(state.budgets)))
    metrics.add_collector(CallbackCollector(lambda: shedding_metrics(state.shedder, config)))
    loop = asyncio.get_running_loop()
    metrics.add_collector(CallbackCollector(lambda: _loop_gauges(loop)))
    ProcessCollector(registry=metrics.registry)
    metrics.add_collector(
        StabilityCollector(state.sessions, config.stability_metrics_ttl_s, metrics.feature_label)
    )
    state.last_use = LastUseFlusher(
        state.keys.last_use,
        state.sessions,
        key_repo.record_last_used,
        config.limits.key_last_used.flush_s,
    )
    state.last_use.start()
    metrics.add_collector(CallbackCollector(state.last_use.metric_families))
    # Key invalidation channel (docs/security.md): subscribe before serving.
    state.key_invalidation = start_key_invalidation(state)
    await monitor.check_all()
    monitor.start()
    # Everything built so far lives as long as the process: keep it out of the collector's
    # full passes, which would otherwise walk the imported libraries on every gen-2 sweep.
    gc.freeze()
    return state


async def close_state(state: GatewayState) -> None:
    """Stop background work, write what is queued, release connections."""
    if state.last_use is not None:
        await state.last_use.stop()  # the last uses, while the engine is still open
    await stop_key_invalidation(state.key_invalidation)
    await state.monitor.stop()
    await state.http.close()
    state.upstream.close()
    await state.limiter.aclose()
    await state.budgets.aclose()
    state.sink.stop()
    state.engine.dispose()
