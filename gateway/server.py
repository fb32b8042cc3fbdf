"""Run the gateway under uvicorn."""

from __future__ import annotations

import uvicorn

from gateway.app import create_asgi
from gateway.config import GatewayConfig
from gateway.lifecycle import check_schema
from plumbline.db import create_db_engine
from plumbline.settings import Settings


def serve(settings: Settings, config: GatewayConfig, host: str, port: int) -> None:
    """Serve until interrupted; SIGTERM drains in-flight calls and writes queued records."""
    engine = create_db_engine(settings.database.url)
    try:
        check_schema(engine)
    finally:
        engine.dispose()
    app = create_asgi(settings, config)
    uvicorn.run(
        app,
        host=host,
        port=port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=config.limits.drain_timeout_s,
        timeout_keep_alive=config.limits.keep_alive_s,
    )
