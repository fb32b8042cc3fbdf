"""GatewayState: the long-lived objects one gateway app owns, built in its lifespan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth.key_cache import KeyCache
from gateway.auth.last_use_flusher import LastUseFlusher
from gateway.config import GatewayConfig
from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.shedding import LoadShedder
from gateway.live_sampling import LiveSampler
from gateway.metrics import GatewayMetrics
from gateway.proxy.rate_limits import RateLimiter
from gateway.recording.call_sink import CallSink
from gateway.response_owners.owners import ResponseOwners
from gateway.routing.health import HealthMonitor
from gateway.routing.model_backends import ModelBackends
from gateway.upstream.connections_by_origin import ConnectionsByOrigin
from gateway.worker_pool.slot import WorkerSlot
from plumbline.otlp.sampler import TraceSampler
from plumbline.settings import Settings

if TYPE_CHECKING:
    from gateway.key_invalidation import KeyInvalidation


@dataclass(slots=True)
class GatewayState:
    """Everything a request handler needs, reachable as `app.state.plumbline`."""

    settings: Settings
    config: GatewayConfig
    engine: Engine
    sessions: sessionmaker[Session]
    sink: CallSink
    http: aiohttp.ClientSession
    upstream: ConnectionsByOrigin
    backends: ModelBackends
    monitor: HealthMonitor
    keys: KeyCache
    metrics: GatewayMetrics
    sampler: LiveSampler
    limiter: RateLimiter
    # Spend budgets of teams and keys (gateway.governance.budgets).
    budgets: BudgetGuard
    response_owners: ResponseOwners
    shedder: LoadShedder
    # The trace sampler the OTEL_* environment set at start-up; None: tracing is off.
    tracing: TraceSampler | None = None
    # False when OTEL_METRICS_EXPORTER does not list prometheus: /metrics then answers 404.
    prometheus_metrics: bool = True
    # The key invalidation channel's subscriber and publisher; None: no channel configured.
    key_invalidation: KeyInvalidation | None = None
    # Writes the keys' last use in batches; None until the lifecycle starts it.
    last_use: LastUseFlusher | None = None
    # Set in a `--workers N` pool: which worker this is (its /metrics gathers the siblings').
    worker: WorkerSlot | None = None
