"""EvalQueue: how the API hands an eval run to `plumbline worker`, by task name, no worker code.

The gateway never imports `workers` (an import contract): it only publishes the message the
workers' `evals.start_run` task consumes, on the broker and key prefix they read, with the
connection bounded so a dead or hung broker costs a request seconds, not the proxy's loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from celery import Celery
from fastapi import Request

from gateway.api.deps import get_state
from plumbline.settings import Settings

# The workers' task and the queue their router sends it to (workers.app: the default queue).
START_RUN = "evals.start_run"
START_QUEUE = "plumbline"


class BrokerUnavailable(Exception):
    """The broker could not take the message within the publish timeout."""


class EvalQueue:
    """A Celery producer on the workers' broker; nothing here consumes or executes tasks."""

    def __init__(self, settings: Settings) -> None:
        worker = settings.worker
        self.timeout_s = worker.publish_timeout_s
        broker = worker.broker_url or settings.redis.url
        self._app = Celery("plumbline-gateway", broker=broker, set_as_current=False)
        self._app.conf.update(
            task_serializer="json",
            accept_content=["json"],
            task_ignore_result=True,
            task_default_queue=START_QUEUE,
            broker_connection_retry=False,
            broker_connection_max_retries=0,
            broker_connection_timeout=self.timeout_s,
            broker_transport_options={
                "global_keyprefix": worker.key_prefix,
                "socket_connect_timeout": self.timeout_s,
                "socket_timeout": self.timeout_s,
                "max_retries": 0,
            },
        )

    def _publish(self, run_id: int, resume: bool) -> None:
        try:
            # A connection per publish, closed after it: runs start rarely, and kombu's pooled
            # connections outlive `Celery.close()` (a shutdown would leave them to the kernel).
            with self._app.connection_for_write() as connection:
                self._app.send_task(
                    START_RUN,
                    args=[run_id, resume],
                    queue=START_QUEUE,
                    retry=False,
                    connection=connection,
                )
        except Exception as error:  # kombu, redis-py and socket errors alike
            raise BrokerUnavailable(f"{type(error).__name__}: {error}") from error

    async def start(self, run_id: int, *, resume: bool) -> None:
        """Queue `evals.start_run(run_id, resume)`; BrokerUnavailable past the timeout."""
        # The publish blocks on a socket: a thread keeps it off the event loop, and the wait is
        # bounded twice (socket timeouts there, this timeout here) so no request hangs on it.
        publish = asyncio.to_thread(self._publish, run_id, resume)
        try:
            await asyncio.wait_for(publish, timeout=self.timeout_s * 2 + 1)
        except TimeoutError as error:
            raise BrokerUnavailable(f"no answer within {self.timeout_s:g} s") from error

    def close(self) -> None:
        """Release the producer's broker connections (at the app's shutdown)."""
        self._app.close()


def close_eval_queue(app: Any) -> None:
    """Close the app's producer if a request built one."""
    queue: EvalQueue | None = getattr(app.state, "eval_queue", None)
    if queue is not None:
        queue.close()
        app.state.eval_queue = None


def eval_queue(request: Request) -> EvalQueue:
    """The app's producer, built on first use (on the event loop, so once) and kept on the app."""
    queue: Any = getattr(request.app.state, "eval_queue", None)
    if queue is None:
        queue = EvalQueue(get_state(request).settings)
        request.app.state.eval_queue = queue
    produced: EvalQueue = queue
    return produced
