"""The `plumbline` command line: one sub-command per process or admin task."""

from __future__ import annotations

import typer

from apps.cli import (
    alerts_cmd,
    beat_cmd,
    demo_cmd,
    end_users_cmd,
    eval_cmd,
    gateway_cmd,
    keys_cmd,
    migrate_cmd,
    retention_cmd,
    simulator_cmd,
    stability_cmd,
    teams_cmd,
    worker_cmd,
)
from plumbline.litellm_offline import keep_litellm_offline


def build_app() -> typer.Typer:
    """Assemble the command tree; heavy imports happen inside each command."""
    app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)

    @app.callback()
    def root() -> None:
        """Plumbline: observability gateway and answer-stability evals for vLLM."""

    for command in (
        simulator_cmd,
        gateway_cmd,
        worker_cmd,
        beat_cmd,
        migrate_cmd,
        keys_cmd,
        teams_cmd,
        end_users_cmd,
        retention_cmd,
        eval_cmd,
        alerts_cmd,
        stability_cmd,
        demo_cmd,
    ):
        command.register(app)
    return app


def main() -> None:
    """Console-script entry point."""
    keep_litellm_offline()
    build_app()()
