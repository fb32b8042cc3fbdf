"""create_celery_app: the Celery app of `plumbline worker` and `plumbline beat`, from settings.

Broker: Redis (production), or `memory://` for the embedded worker, which runs beat in a
thread of the same process (see `plumbline worker --embedded`). The database is the source of
truth for all work; the sweeper re-sends whatever a lost message or a dead worker left behind,
which is what makes a non-durable in-process broker acceptable for a demo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import Celery, shared_task
from celery.signals import worker_process_init, worker_process_shutdown

from plumbline.litellm_offline import keep_litellm_offline
from plumbline.settings import Settings
from workers.runtime import WorkerRuntime

F = TypeVar("F", bound=Callable[..., Any])
QUEUES = ("plumbline", "evals", "notify", "live")
TASK_MODULES = (
    "workers.tasks.evals",
    "workers.tasks.schedules",
    "workers.tasks.alerts",
    "workers.tasks.live",
    "workers.tasks.retention",
    "workers.tasks.usage_rollups",
)
ROUTES = {
    "evals.execute_batch": {"queue": "evals"},
    "alerts.*": {"queue": "notify"},
    "live.*": {"queue": "live"},
}


def broker_url(settings: Settings, embedded: bool) -> str:
    """Where tasks are queued."""
    if embedded:
        return "memory://"
    return settings.worker.broker_url or settings.redis.url


def beat_schedule(settings: Settings) -> dict[str, Any]:
    """The periodic ticks; each expires if not picked up before the next one is sent."""
    worker = settings.worker
    ticks = {
        "dispatch-due-runs": ("schedules.dispatch_due_runs", worker.schedule_tick_s),
        "sweep": ("evals.sweep", worker.sweep_interval_s),
        "dispatch-live-samples": ("live.dispatch_pending", worker.live_dispatch_interval_s),
        "apply-retention": ("retention.apply", worker.retention_interval_s),
        "roll-up-usage": ("usage.rollup", worker.usage_rollup_interval_s),
    }
    return {
        key: {"task": task, "schedule": every, "options": {"expires": every}}
        for key, (task, every) in ticks.items()
    }


def create_celery_app(settings: Settings | None = None, *, embedded: bool = False) -> Celery:
    """A configured app; its runtime (`app.plumbline`) builds connections lazily per process."""
    keep_litellm_offline()  # also under `celery -A`, without the CLI
    settings = settings or Settings()
    worker = settings.worker
    app = Celery("plumbline", broker=broker_url(settings, embedded), set_as_current=True)
    transport: dict[str, Any] = {}
    if not embedded:
        transport = {
            "visibility_timeout": worker.visibility_timeout_s,
            "unacked_restore_interval": worker.unacked_restore_interval_s,
            "unacked_restore_throttle": 1,
            "global_keyprefix": worker.key_prefix,
        }
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_transport_options=transport,
        broker_connection_retry_on_startup=True,
        task_default_queue="plumbline",
        task_routes=ROUTES,
        beat_schedule=beat_schedule(settings),
        beat_scheduler="celery.beat:Scheduler",
        timezone="UTC",
        enable_utc=True,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        include=list(TASK_MODULES),
    )
    runtime = WorkerRuntime(settings, embedded=embedded)
    app.plumbline = runtime

    def fresh_connections(**_: Any) -> None:
        runtime.dispose()

    def close_eval_loop(**_: Any) -> None:
        runtime.close()

    worker_process_init.connect(fresh_connections, weak=False)
    worker_process_shutdown.connect(close_eval_loop, weak=False)
    return app


def runtime_of(app: Any) -> WorkerRuntime:
    """The runtime of the app a task is bound to."""
    runtime: WorkerRuntime = app.plumbline
    return runtime


def enqueue(app: Any, task: str, *args: Any, countdown: float | None = None) -> None:
    """Send a task by name (its route picks the queue); call only after the commit."""
    app.send_task(task, args=list(args), countdown=countdown)


def named_task(name: str) -> Callable[[F], F]:
    """`shared_task(name=..., bind=True)`: acks late (app default), explicitly named."""
    decorator: Callable[[F], F] = shared_task(name=name, bind=True)
    return decorator
