"""`plumbline gateway`: serve the proxy, read API and metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the gateway command to the CLI."""

    @app.command("gateway")
    def gateway(
        config: Annotated[Path, typer.Option(help="Gateway YAML (models, backends, prices)")],
        host: Annotated[str, typer.Option(help="Address to bind")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to bind")] = 8080,
        workers: Annotated[
            int,
            typer.Option(
                min=1,
                max=256,
                help="Proxy processes on the one port, each with its recorder and spool",
            ),
        ] = 1,
    ) -> None:
        """Serve the OpenAI-compatible gateway that records every call."""
        from pydantic import ValidationError

        from gateway.config import load_gateway_config
        from gateway.lifecycle import SchemaMissingError
        from gateway.server import ensure_schema, serve
        from gateway.worker_pool.pool import PoolConfigError, check_pool_config, serve_pool
        from plumbline.logging_setup import configure_logging
        from plumbline.settings import Settings

        configure_logging()
        try:
            gateway_config = load_gateway_config(config)
        except (OSError, ValidationError, ValueError) as error:
            raise typer.BadParameter(f"{config}: {error}", param_hint="--config") from None
        try:
            settings = Settings()
            check_pool_config(gateway_config, workers, settings.key_invalidation.channel)
            if workers == 1:
                serve(settings, gateway_config, host, port)
                return
            ensure_schema(settings)
        except (SchemaMissingError, PoolConfigError) as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None
        raise typer.Exit(serve_pool(gateway_config, config, host, port, workers))
