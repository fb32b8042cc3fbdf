"""`python -m gateway.worker_pool.worker_main`: one proxy worker of `plumbline gateway --workers N`.

Started by the supervisor with the listening socket inherited (`--fd`). It serves the gateway
with a spool directory of its own (`<spool_dir>/worker-<index>`) and its own metrics on a unix
socket in the run directory, and stops (draining) if the supervisor dies without telling it.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path

from gateway.config import load_gateway_config
from gateway.server import serve_worker
from gateway.worker_pool.slot import WorkerSlot
from plumbline.logging_setup import configure_logging
from plumbline.settings import Settings

log = logging.getLogger(__name__)
PARENT_POLL_S = 1.0


def _watch_parent(supervisor_pid: int) -> None:
    """SIGTERM this worker (a drain) once its supervisor is gone (killed, not stopping it)."""

    def watch() -> None:
        while os.getppid() == supervisor_pid:
            threading.Event().wait(PARENT_POLL_S)
        log.error("the supervisor %d is gone; draining this worker", supervisor_pid)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="plumbline-watch-supervisor", daemon=True).start()


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gateway.worker_pool.worker_main")
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--supervisor-pid", type=int, required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    """Load the config the supervisor loaded, give this worker its own spool, and serve."""
    arguments = _arguments(argv)
    configure_logging()
    config = load_gateway_config(arguments.config)
    slot = WorkerSlot(
        arguments.index, arguments.workers, arguments.run_dir, config.recording.spool_dir
    )
    recording = config.recording.model_copy(update={"spool_dir": slot.spool_dir()})
    config = config.model_copy(update={"recording": recording})
    _watch_parent(arguments.supervisor_pid)
    listener = socket.socket(fileno=arguments.fd)
    serve_worker(Settings(), config, slot, listener)


if __name__ == "__main__":
    main(sys.argv[1:])
