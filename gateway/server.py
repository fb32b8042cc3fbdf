"""Run the gateway under uvicorn: one process, or one worker of a `--workers N` pool."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

from gateway.app import create_asgi
from gateway.config import GatewayConfig
from gateway.lifecycle import check_schema
from gateway.worker_pool.slot import WorkerSlot
from plumbline.db import create_db_engine
from plumbline.settings import Settings


def uvicorn_options(config: GatewayConfig) -> dict[str, Any]:
    """How uvicorn serves the gateway, alone or as a pool's worker."""
    return {
        "loop": "uvloop",
        "http": "httptools",
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": config.limits.drain_timeout_s,
        "timeout_keep_alive": config.limits.keep_alive_s,
    }


def ensure_schema(settings: Settings) -> None:
    """SchemaMissingError unless the database was migrated."""
    engine = create_db_engine(settings.database.url)
    try:
        check_schema(engine)
    finally:
        engine.dispose()


def serve(settings: Settings, config: GatewayConfig, host: str, port: int) -> None:
    """Serve until interrupted; SIGTERM drains in-flight calls and writes queued records."""
    ensure_schema(settings)
    app = create_asgi(settings, config)
    uvicorn.run(app, host=host, port=port, **uvicorn_options(config))


def serve_worker(
    settings: Settings, config: GatewayConfig, slot: WorkerSlot, listener: socket.socket
) -> None:
    """Serve on the supervisor's listening socket until SIGTERM, which drains like `serve`."""
    app = create_asgi(settings, config, slot)
    server = uvicorn.Server(uvicorn.Config(app, **uvicorn_options(config)))
    server.run(sockets=[listener])
