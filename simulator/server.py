"""`serve()`: run the simulator under uvicorn (uvloop + httptools) until interrupted."""

from __future__ import annotations

import logging
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import uvicorn

from simulator.app import create_app
from simulator.config import SimulatorConfig
from simulator.streaming import SimulatedConnectionDrop


class _DropNoise(logging.Filter):
    """Injected connection drops are planned; keep their tracebacks out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, SimulatedConnectionDrop)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    config_path: str | Path | None = None,
    *,
    fd: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> None:
    """Serve on host:port (or an inherited listening socket `fd`) with the YAML config.

    `overrides` are dotted config keys (e.g. `timing.decode_ms_per_token`) that win over
    the file.
    """
    config = SimulatorConfig.load(config_path, overrides)
    app = create_app(config)
    logging.getLogger("uvicorn.error").addFilter(_DropNoise())
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="uvloop",
            http="httptools",
            log_level=config.log_level,
            access_log=False,
            timeout_keep_alive=30,
            backlog=4096,
        )
    )
    if fd is None:
        server.run()
        return
    # uvicorn's own `fd` option wraps the socket as AF_UNIX, so accepted TCP connections never
    # get TCP_NODELAY and small SSE writes wait on delayed ACKs (about 40 ms). A socket built
    # from the descriptor keeps its real family.
    server.run(sockets=[socket.socket(fileno=fd)])
