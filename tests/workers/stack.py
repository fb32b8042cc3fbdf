"""A real stack for worker tests: simulator, Postgres, gateway, Redis prefix, workers, beats."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import redis
from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

from plumbline.db import create_db_engine, make_session_factory
from plumbline.settings import Settings
from plumbline.settings_env import settings_environment
from simulator.process import SimulatorProcess
from tests.support import waiting
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.workers.processes import CeleryProcess
from workers.app import create_celery_app

REDIS_URL = "redis://127.0.0.1:6379/0"
T = TypeVar("T")

# Seconds, not the production minutes: leases, stall detection and ticks small enough for tests.
FAST = {
    "sample_lease_s": 4,
    "slot_lease_s": 6,
    "finalize_lease_s": 15,
    "stall_after_s": 4,
    "sweep_interval_s": 1,
    "schedule_tick_s": 0.5,
    "schedule_grace_s": 30,
    "visibility_timeout_s": 60,
    "unacked_restore_interval_s": 1,
    "live_dispatch_interval_s": 0.5,
    "batch_size": 10,
}


def flatten(prefix: str, values: dict[str, Any]) -> dict[str, str]:
    """Nested settings as PLUMBLINE_A__B environment variables (dicts of dicts as JSON)."""
    return settings_environment(values, prefix)


@dataclass
class WorkerStack:
    """The processes and settings of one test module."""

    simulator: SimulatorProcess
    gateway: GatewayProcess
    database_url: str
    sessions: sessionmaker[Session]
    admin_key: str
    config: dict[str, Any]
    exits: ExitStack
    processes: list[CeleryProcess] = field(default_factory=list)
    # Variables every process of the stack gets besides its settings (OTEL_*, say).
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """Environment of every worker and beat process of this stack."""
        return {**flatten("", self.config), "PLUMBLINE_LOG_LEVEL": "INFO", **self.extra_env}

    def settings(self) -> Settings:
        """The same settings, in this process."""
        return Settings.model_validate(self.config)

    def app(self) -> Celery:
        """A producer app on the stack's broker prefix."""
        return create_celery_app(self.settings())

    def send(self, task: str, *args: Any) -> None:
        """Enqueue a task by name."""
        self.app().send_task(task, args=list(args))

    def worker(self, concurrency: int = 2, queues: str | None = None) -> CeleryProcess:
        """Start a `plumbline worker` (stopped with the stack)."""
        args = [f"--concurrency={concurrency}"] + ([f"--queues={queues}"] if queues else [])
        process = CeleryProcess("worker", args, self.env).start()
        self.processes.append(process)
        self.exits.callback(process.stop)
        return process

    def beat(self) -> CeleryProcess:
        """Start a `plumbline beat` (stopped with the stack)."""
        process = CeleryProcess("beat", [], self.env).start()
        self.processes.append(process)
        self.exits.callback(process.stop)
        return process

    def logs(self) -> str:
        """The logs of every worker and beat started so far."""
        return "\n".join(p.log() for p in self.processes)


class HasLogs(Protocol):
    """Something whose logs explain a timeout (a stack, a process)."""

    def logs(self) -> str:
        """Its logs so far."""
        ...


def wait_for(check: Callable[[], T | None], timeout: float, what: str, stack: HasLogs) -> T:
    """Poll until `check` returns something truthy; fail with the processes' logs."""
    try:
        return waiting.wait_for(check, timeout=timeout, what=what, poll=0.2)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{stack.logs()[-6000:]}") from None


@contextmanager
def worker_stack(
    simulator_config: dict[str, Any],
    *,
    worker: dict[str, Any] | None = None,
    model: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    **gateway_overrides: Any,
) -> Iterator[WorkerStack]:
    """Simulator, migrated Postgres, gateway and a Redis key prefix of this module's own;
    `env` goes to the gateway and to every worker and beat."""
    prefix = f"plumbline-test-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config))
        url = exits.enter_context(postgres_database("plumbline_workers"))
        admin_key = issue_key(url, "ops", admin=True)
        config = gateway_config(simulator.base_url, **gateway_overrides)
        config["models"][0].update(model or {})
        gateway = GatewayProcess(config, url, env=env)
        exits.enter_context(gateway)
        engine = create_db_engine(url)
        exits.callback(engine.dispose)
        exits.callback(_drop_keys, prefix)
        settings = {
            "database": {"url": url},
            "redis": {"url": REDIS_URL},
            "key_salt": "plumbline-test-pepper",
            "eval": {
                "gateway_url": gateway.url,
                "api_key": admin_key,
                "logprob_wait_s": 5,
                "concurrency": 8,
                "backend_concurrency": 16,
            },
            "worker": {**FAST, "key_prefix": prefix, **(worker or {})},
        }
        yield WorkerStack(
            simulator,
            gateway,
            url,
            make_session_factory(engine),
            admin_key,
            settings,
            exits,
            extra_env=dict(env or {}),
        )


def _drop_keys(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
