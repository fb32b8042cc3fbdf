"""WorkerRuntime: what tasks of one worker process share, built lazily after the fork.

It hangs off the Celery app (`app.plumbline`), so there is no module-level state: the engine and
the eval loop are created on first use in each process and dropped in `worker_process_init`, so
a forked child never reuses its parent's connections (or a loop whose thread did not fork).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Collection
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from evals.alerts.clients import DeliveryClients, delivery_clients
from evals.gateway_client import Completion, GatewayCallError, GatewayClient
from evals.live_sampling.resampling import LiveJob, resample
from evals.run_trace import RunTracing, run_tracing_from_env
from evals.runs.execution import ExecutionPolicy, ExecutionReport, execute_samples
from plumbline.db import create_db_engine, make_session_factory
from plumbline.settings import Settings
from workers.eval_loop import EvalLoop
from workers.process_limits import ProcessLimits
from workers.redis_limits import RedisLimits

# `plumbline worker --embedded` runs beside a gateway on this machine (its default port).
DEFAULT_GATEWAY = "http://127.0.0.1:8080"
MISSING_GATEWAY_URL = (
    "workers send eval and resample calls (with the admin eval key) to the setting "
    "eval.gateway_url: set PLUMBLINE_EVAL__GATEWAY_URL to the gateway's address"
)
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EvalResources:
    """What the eval and resample calls of one process share: a gateway client and limits."""

    client: GatewayClient
    limits: RedisLimits | ProcessLimits


class WorkerRuntime:
    """Settings, database sessions, gateway clients and concurrency limits of a worker."""

    def __init__(self, settings: Settings, *, embedded: bool) -> None:
        self.settings = settings
        self.embedded = embedded
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._sessions: sessionmaker[Session] | None = None
        self._http: DeliveryClients | None = None
        self._eval_loop: EvalLoop[EvalResources] | None = None
        self._process_limits = ProcessLimits(
            settings.eval.concurrency, settings.eval.backend_concurrency
        )
        # Read once, at start-up: a bad OTEL_* value stops the worker, naming the variable.
        self.run_tracing: RunTracing | None = run_tracing_from_env(os.environ)

    def sessions(self) -> sessionmaker[Session]:
        """The process's session factory (engine created on first use)."""
        with self._lock:
            if self._sessions is None:
                database = self.settings.database
                self._engine = create_db_engine(database.url, pool_size=database.pool_size)
                self._sessions = make_session_factory(self._engine)
            return self._sessions

    def http(self) -> DeliveryClients:
        """The shared HTTP clients for notification deliveries (suite channels guarded)."""
        with self._lock:
            if self._http is None:
                self._http = delivery_clients(self.settings.worker.notify)
            return self._http

    def dispose(self) -> None:
        """Drop connections inherited from a parent process (or on shutdown)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose(close=False)
            self._engine, self._sessions = None, None
            self._http = None
            # Its thread stayed in the parent; the parent closes its own.
            self._eval_loop = None

    def close(self) -> None:
        """Close this process's eval loop (releasing its slots) when the process ends."""
        with self._lock:
            loop, self._eval_loop = self._eval_loop, None
        if loop is not None:
            loop.close()

    def eval_loop(self) -> EvalLoop[EvalResources]:
        """The process's eval loop, with its gateway client and limits (started on first use)."""
        with self._lock:
            if self._eval_loop is None:
                self._eval_loop = EvalLoop(self._open_resources)
            return self._eval_loop

    async def _open_resources(self, exits: AsyncExitStack) -> EvalResources:
        client = await exits.enter_async_context(self.gateway_client())
        limits = await exits.enter_async_context(self.limits())
        return EvalResources(client, limits)

    def gateway_client(self) -> GatewayClient:
        """A client of the gateway with the eval key (an admin key)."""
        evals = self.settings.eval
        if evals.api_key is None or not evals.api_key.get_secret_value():
            raise RuntimeError(
                "workers send eval and resample calls through the gateway: set "
                "PLUMBLINE_EVAL__API_KEY to an admin key (`plumbline keys create --admin`)"
            )
        return GatewayClient(
            self.gateway_url(), evals.api_key.get_secret_value(), timeout_s=evals.request_timeout_s
        )

    def gateway_url(self) -> str:
        """Where eval calls go: eval.gateway_url; the embedded worker defaults to the local one."""
        url = self.settings.eval.gateway_url
        if url:
            return url
        if self.embedded:
            return DEFAULT_GATEWAY
        raise RuntimeError(MISSING_GATEWAY_URL)

    def execution_policy(self) -> ExecutionPolicy:
        """Retries and the sample claim lease (renewed while held) of the execution unit."""
        lease_s = self.settings.worker.sample_lease_s
        return ExecutionPolicy(
            max_attempts=self.settings.eval.max_attempts, lease_s=lease_s, renew_every_s=lease_s / 3
        )

    @asynccontextmanager
    async def limits(self) -> AsyncIterator[RedisLimits | ProcessLimits]:
        """Concurrency limits that hold across workers (Redis), or across this process."""
        if self.embedded:
            yield self._process_limits
            return
        evals, worker = self.settings.eval, self.settings.worker
        async with RedisLimits.connect(
            self.settings.redis.url,
            prefix=worker.key_prefix,
            per_suite=evals.concurrency,
            per_backend=evals.backend_concurrency,
            lease_s=worker.slot_lease_s,
        ) as limits:
            yield limits

    def model_lens(self) -> dict[str, int | None]:
        """Each model's context size as the gateway reports it ({} if it cannot say)."""

        async def lens(shared: EvalResources) -> dict[str, int | None]:
            try:
                return await shared.client.max_model_lens()
            except GatewayCallError as error:
                log.warning("cannot read max_model_len from the gateway: %s", error)
                return {}

        return self.eval_loop().run(lens)

    def execute(self, sample_ids: Collection[int]) -> dict[str, int]:
        """Execute samples under the shared limits; counts per outcome."""
        sessions, policy, tracing = self.sessions(), self.execution_policy(), self.run_tracing

        async def execute(shared: EvalResources) -> ExecutionReport:
            return await execute_samples(
                sessions,
                shared.client,
                sample_ids,
                limits=shared.limits,
                policy=policy,
                tracing=tracing,
            )

        report = self.eval_loop().run(execute)
        return {s: report.count(s) for s in ("done", "rejected", "failed", "skipped")}

    def resample(self, job: LiveJob) -> list[Completion | GatewayCallError]:
        """Re-ask a live sample's request under the shared resample bound."""
        concurrency = self.settings.worker.resample_concurrency

        async def resend(shared: EvalResources) -> list[Completion | GatewayCallError]:
            return await resample(job, shared.client, shared.limits, concurrency)

        return self.eval_loop().run(resend)
