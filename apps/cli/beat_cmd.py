"""`plumbline beat`: ticks schedules, the sweeper and live sampling; safe to run twice."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the beat command to the CLI."""

    @app.command("beat")
    def beat(
        loglevel: Annotated[str, typer.Option(help="Log level")] = "INFO",
    ) -> None:
        """Send the periodic ticks; suite schedules are read from the database on each tick."""
        from plumbline.logging_setup import configure_logging
        from plumbline.settings import Settings
        from workers.app import create_celery_app

        configure_logging()
        settings = Settings()
        celery = create_celery_app(settings)
        # Ticks are short, so beat must wake at least as often as the shortest of them.
        every = min(settings.worker.schedule_tick_s, settings.worker.sweep_interval_s, 5.0)
        celery.Beat(loglevel=loglevel, max_interval=every).run()
