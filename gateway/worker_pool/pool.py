"""serve_pool: bind the port, run the supervisor over N worker processes, clean up after."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from gateway.config import GatewayConfig
from gateway.worker_pool.supervisor import Supervisor

LISTEN_BACKLOG = 2048


class PoolConfigError(ValueError):
    """The configuration cannot be served by several processes."""


def check_pool_config(config: GatewayConfig, workers: int, invalidation_channel: str) -> None:
    """Refuse settings whose state is per process and would be wrong N times over."""
    if workers <= 1:
        return
    if config.limits.rate_limits.store == "memory":
        raise PoolConfigError(
            f"--workers {workers} with limits.rate_limits.store: memory would let each worker "
            f"grant the whole limit ({workers} times it in all); set "
            "limits.rate_limits.store: redis (PLUMBLINE_REDIS__URL), which keeps one limit "
            "for every worker and replica"
        )
    if config.recording.in_process:
        raise PoolConfigError(
            f"--workers {workers} needs the recorder process: recording.in_process has no "
            "spool lock, so a dead worker's spool would not be replayed; remove the setting"
        )
    if invalidation_channel == "none":
        raise PoolConfigError(
            f"--workers {workers} with key_invalidation.channel: none would let a key revoked "
            "through one worker keep working on the others for up to limits.key_cache_ttl_s; "
            "set PLUMBLINE_KEY_INVALIDATION__CHANNEL=redis (PLUMBLINE_REDIS__URL), which "
            "drops it on every worker and replica within a second"
        )


def _bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(address)
    listener.listen(LISTEN_BACKLOG)
    listener.set_inheritable(True)
    return listener


def serve_pool(config: GatewayConfig, config_path: Path, host: str, port: int, workers: int) -> int:
    """Serve `workers` gateway processes on one port until SIGTERM; the exit status."""
    listener = _bind(host, port)
    # Each worker's metrics socket: private to the gateway's user.
    run_dir = Path(tempfile.mkdtemp(prefix="plumbline-gateway-"))
    supervisor_pid = os.getpid()

    def command(index: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "gateway.worker_pool.worker_main",
            *("--config", str(config_path.resolve()), "--fd", str(listener.fileno())),
            *("--index", str(index), "--workers", str(workers)),
            *("--run-dir", str(run_dir), "--supervisor-pid", str(supervisor_pid)),
        ]

    try:
        supervisor = Supervisor(workers, command, listener, config.limits.drain_timeout_s)
        return supervisor.run()
    finally:
        listener.close()
        shutil.rmtree(run_dir, ignore_errors=True)
