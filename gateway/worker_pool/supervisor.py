"""The supervisor of `plumbline gateway --workers N`: one listening socket, N workers on it.

The socket is bound once here and inherited by every worker, which all accept on it (as
uvicorn's and gunicorn's own pools do), rather than each binding the port with SO_REUSEPORT:
connections a killed worker had not accepted yet stay in the one shared queue for its siblings
(with SO_REUSEPORT the kernel resets those of the dead worker's queue), and no other process of
the same user can join the port. A worker that exits is started again, after a pause that
doubles with each quick failure. SIGTERM or SIGINT drains every worker (each finishes its calls
within limits.drain_timeout_s and its recorder writes what it holds) and then exits.
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

log = logging.getLogger(__name__)
POLL_S = 0.2
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
# A worker that ran this long before exiting is restarted without a pause.
STABLE_S = 30.0
# Beyond the drain: the recorder's wait to write what it holds (RecorderProcess.STOP_WAIT_S).
RECORDER_GRACE_S = 75.0


@dataclass(eq=False)
class _Worker:
    index: int
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    quick_exits: int = 0
    restart_at: float = 0.0


class Supervisor:
    """Keeps `count` workers running until told to stop, then drains them all."""

    def __init__(
        self,
        count: int,
        command: Callable[[int], list[str]],
        listener: socket.socket,
        drain_timeout_s: float,
    ) -> None:
        self._command = command
        self._listener = listener
        self._fd = listener.fileno()
        self._drain_timeout_s = drain_timeout_s
        self._workers = [_Worker(index) for index in range(count)]
        self._stop = threading.Event()

    def run(self) -> int:
        """Start the workers, replace those that exit, drain all on SIGTERM/SIGINT; 0 then."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        for worker in self._workers:
            self._start(worker)
        while not self._stop.wait(POLL_S):
            now = time.monotonic()
            for worker in self._workers:
                self._tend(worker, now)
        self._drain()
        return 0

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self._stop.is_set():
            log.warning("signal %d: draining %d workers", signum, len(self._workers))
        self._stop.set()

    def _start(self, worker: _Worker) -> None:
        # Its own session: a terminal's Ctrl-C reaches the supervisor, which drains in order.
        worker.process = subprocess.Popen(
            self._command(worker.index), pass_fds=[self._fd], start_new_session=True
        )
        worker.started_at = time.monotonic()
        log.info("gateway worker %d started (pid %d)", worker.index, worker.process.pid)

    def _tend(self, worker: _Worker, now: float) -> None:
        process = worker.process
        if process is None:
            if now >= worker.restart_at:
                self._start(worker)
            return
        code = process.poll()
        if code is None:
            return
        lived = now - worker.started_at
        worker.quick_exits = 0 if lived >= STABLE_S else worker.quick_exits + 1
        pause = 0.0
        if worker.quick_exits:
            pause = min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2 ** (worker.quick_exits - 1))
        log.error(
            "gateway worker %d (pid %d) exited with %s after %.1f s; starting another in %.1f s",
            worker.index,
            process.pid,
            code,
            lived,
            pause,
        )
        worker.process = None
        worker.restart_at = now + pause

    def _drain(self) -> None:
        # The port must refuse new connections while the workers drain: the kernel would
        # otherwise queue them on this still-open copy of the socket, and reset them all when
        # it closes (a load balancer sends a refused connection to another replica instead).
        self._listener.close()
        running = [w.process for w in self._workers if w.process and w.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self._drain_timeout_s + RECORDER_GRACE_S
        for process in running:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("gateway worker pid %d did not drain in time; killing it", process.pid)
                process.kill()
                process.wait()
