"""ServerProcess: a server in a child process, started, health-checked and always stopped."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import aiohttp

from plumbline.blocking_http import BlockingHttp
from plumbline.port_owner import group_listens_on

log = logging.getLogger(__name__)
KILL_REAP_S = 60.0


class ServerProcess:
    """Runs a command, waits until it is ready, and tears it down on exit.

    Ready means `health_url` answers 200, or (for processes without HTTP, such as a Celery
    worker) `ready_line` appears in the output. Used by the demo and by tests.
    """

    def __init__(
        self,
        args: list[str],
        health_url: str | None = None,
        env: dict[str, str] | None = None,
        startup_timeout: float = 30.0,
        ready_line: str | None = None,
    ) -> None:
        if (health_url is None) == (ready_line is None):
            raise ValueError("give exactly one of health_url and ready_line")
        self.args = args
        self.health_url = health_url
        self.ready_line = ready_line
        self.env = {**os.environ, **(env or {})}
        self.startup_timeout = startup_timeout
        self.log_path = Path(tempfile.mkstemp(prefix="plumbline-server-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        """Start and wait for health."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.args,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        deadline = time.monotonic() + self.startup_timeout
        with BlockingHttp() as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited at start-up:\n{self.log_tail()}")
                if self._ready(http):
                    return self
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server not healthy after {self.startup_timeout} s:\n{self.log_tail()}")

    def _ready(self, http: BlockingHttp) -> bool:
        if self.ready_line is not None:
            return self.ready_line in self.log_path.read_text(errors="replace")
        assert self.health_url is not None and self.process is not None
        try:
            if http.request("GET", self.health_url, timeout_s=1.0).status != 200:
                return False
        except (aiohttp.ClientError, TimeoutError):
            return False
        # Another process may hold the port picked for the child (taken before the child bound
        # it): its answer must not pass for the child's. Unknown (no /proc) counts as ours.
        port = urlsplit(self.health_url).port
        return port is None or group_listens_on(self.process.pid, port) is not False

    def log_tail(self, lines: int = 60) -> str:
        """The end of the server's output."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def signal(self, sig: int) -> None:
        """Send a signal to the server."""
        assert self.process is not None
        self.process.send_signal(sig)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL the whole process group if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            # Say why it lingered before the evidence dies with it.
            log.warning("%s ignored SIGTERM for %s s:\n%s", self.args[:4], timeout, self.log_tail())
            os.killpg(self.process.pid, signal.SIGKILL)
            # A killed process on a loaded machine can take seconds to be reaped.
            return self.process.wait(KILL_REAP_S)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def plumbline_command(*args: str) -> list[str]:
    """The `plumbline` CLI of this interpreter's environment, run as `python -m apps.cli`."""
    # A command line, not an import: the kit may start the application but never imports it.
    return [sys.executable, "-m", "apps.cli", *args]


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
