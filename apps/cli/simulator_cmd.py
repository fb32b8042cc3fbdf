"""`plumbline simulator`: serve the bundled vLLM stand-in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the simulator command to the CLI."""

    @app.command("simulator")
    def simulator(
        host: Annotated[str, typer.Option(help="Address to bind")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to bind")] = 8000,
        config: Annotated[
            Path | None, typer.Option(help="Simulator YAML (timing model, scenarios, faults)")
        ] = None,
    ) -> None:
        """Serve a simulated vLLM 0.32 OpenAI-compatible server."""
        from simulator.server import serve

        serve(host=host, port=port, config_path=config)
