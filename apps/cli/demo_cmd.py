"""`plumbline demo`: the whole story on the embedded default."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the demo command to the CLI."""

    @app.command("demo")
    def demo(
        directory: Annotated[Path, typer.Option(help="Where the demo keeps its files")] = Path(
            "var/demo"
        ),
        calls: Annotated[int, typer.Option(help="Product calls to send", min=1)] = 120,
        keep_running: Annotated[
            bool, typer.Option(help="Leave everything running (dashboard included) until Ctrl-C")
        ] = True,
    ) -> None:
        """Simulator, gateway and worker on SQLite: traffic, a suite, an alert, a dashboard."""
        from apps.demo.run import run_demo

        run_demo(directory, calls, keep_running)
