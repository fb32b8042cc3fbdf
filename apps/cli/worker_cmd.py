"""`plumbline worker`: a Celery worker for eval fan-out, alerts, notifications, live sampling."""

from __future__ import annotations

import logging
import os
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the worker command to the CLI."""

    @app.command("worker")
    def worker(
        concurrency: Annotated[int, typer.Option(min=1, help="Worker processes (threads)")] = 2,
        queues: Annotated[
            str, typer.Option(help="Comma-separated queues: plumbline, evals, notify, live")
        ] = "plumbline,evals,notify,live",
        embedded: Annotated[
            bool,
            typer.Option(
                help="No Redis: in-memory broker, thread pool and beat in this one process"
            ),
        ] = False,
        loglevel: Annotated[str, typer.Option(help="Log level")] = "INFO",
    ) -> None:
        """Run tasks from the broker (Redis, or in-process with --embedded)."""
        from celery.beat import EmbeddedService

        from plumbline.logging_setup import configure_logging
        from plumbline.settings import Settings
        from workers.app import QUEUES, create_celery_app

        configure_logging()
        unknown = sorted(set(queues.split(",")) - set(QUEUES))
        if unknown:
            raise typer.BadParameter(f"unknown queues: {', '.join(unknown)}", param_hint="--queues")
        settings = Settings()
        if settings.eval.api_key is None:
            logging.getLogger(__name__).warning(
                "PLUMBLINE_EVAL__API_KEY is not set: eval and resample tasks will fail (they "
                "call the gateway with an admin key); notifications still work"
            )
        if not embedded and not settings.eval.gateway_url:
            logging.getLogger(__name__).warning(
                "PLUMBLINE_EVAL__GATEWAY_URL is not set: eval and resample tasks will fail (the "
                "eval key is only ever sent to that address); notifications still work"
            )
        celery = create_celery_app(settings, embedded=embedded)
        argv = [
            "worker",
            f"--concurrency={concurrency}",
            f"--queues={queues}",
            f"--loglevel={loglevel}",
            f"--hostname=plumbline-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if embedded:
            # The memory broker lives in this process, so beat and the pool must too.
            # In-memory schedule: nothing is written to the working directory.
            EmbeddedService(celery, thread=True, scheduler_cls=celery.conf.beat_scheduler).start()
            argv.append("--pool=threads")
        celery.worker_main(argv)
